// The shared setup of the VerificationRegistry tests (one file per entry point in this folder): one network
// connection, the deploy fixture, the subjects jobs ask about, and the vote helpers.
import { network } from "hardhat";

import { addressToBytes32, balanceWord, deployProtocol, type Protocol } from "../../../helpers/protocol.ts";
import { queryResultHash } from "../../../../src/common/query-result.ts";
import { revealCommitmentOf } from "@avn/protocol/commit-reveal";

export const { ethers, networkHelpers } = await network.create();
export const { time } = networkHelpers;
export const fixture = () => deployProtocol(ethers);

/**
 * `networkHelpers.loadFixture`, with the chain's clock going on from the snapshot rather than from the wall clock.
 * The snapshot is taken once per process (this module's connection is shared by every file that imports it), and
 * after a revert the simulated chain stamps its next block with the wall-clock time. A file run more than
 * LIVENESS_WINDOW (10 min) after the first one to load the fixture found every heartbeat of the fixture expired,
 * and its licenses no longer live: 29 tests failed so in a slow CI run.
 */
export async function loadFixture<T>(fixtureToLoad: () => Promise<T>): Promise<T> {
  const loaded = await networkHelpers.loadFixture(fixtureToLoad);
  await time.setNextBlockTimestamp((await time.latest()) + 1);
  return loaded;
}

/** The modes of MockVerificationConsumer, in its enum's order. */
export enum ConsumerMode {
  Record,
  Revert,
  BurnGas,
  Reenter,
}

export type Signer = Protocol["alice"];

export const HOLDER = "0x1111111111111111111111111111111111111111";
export const TOKEN = "0x2222222222222222222222222222222222222222";
export const SOL_OWNER = ethers.id("solana owner");
export const SOL_MINT = ethers.id("solana mint");

/** What a job asks about, as votes name it. */
export interface Subject {
  owner: string;
  asset: string;
}
export const EVM_SUBJECT: Subject = { owner: addressToBytes32(HOLDER), asset: addressToBytes32(TOKEN) };
export const SOL_SUBJECT: Subject = { owner: SOL_OWNER, asset: SOL_MINT };

/** A vote on the job about `subject` (the EVM holding by default) with `balance` and its QueryResult word. */
export function submission(
  jobId: bigint,
  licenseIds: bigint[],
  balance: bigint,
  sourceBlock = 100n,
  queryResult = balanceWord(balance),
  subject = EVM_SUBJECT,
) {
  return { jobId, licenseIds, ...subject, balance, queryResultHash: queryResultHash(queryResult), sourceBlock };
}

/** One submission of `balance` (with its matching QueryResult word) for `licenseIds` by `operator`. */
export function submit(
  registry: Protocol["registry"],
  operator: Signer,
  jobId: bigint,
  licenseIds: bigint[],
  balance: bigint,
  sourceBlock = 100n,
  queryResult = balanceWord(balance),
  subject = EVM_SUBJECT,
) {
  return registry.connect(operator).submitResults([submission(jobId, licenseIds, balance, sourceBlock, queryResult, subject)]);
}

/**
 * Votes by commit–reveal, as the nodes cast them on the network: every operator's commit in one block, then
 * every reveal in the next (in `votes`' order). Blocks are mined by hand for that, then automine is back on.
 * Resolves with the reveals' receipts.
 */
export async function commitAndReveal(
  registry: Protocol["registry"],
  votes: Array<{ operator: Signer; submissions: ReturnType<typeof submission>[] }>,
) {
  const to = await registry.getAddress();
  const reveals = votes.map(({ operator, submissions }) => ({
    operator,
    data: registry.interface.encodeFunctionData("revealResults", [ethers.hexlify(ethers.randomBytes(32)), submissions]) as `0x${string}`,
  }));
  await ethers.provider.send("evm_setAutomine", [false]);
  try {
    for (const { operator, data } of reveals) {
      await registry.connect(operator).commitResults(revealCommitmentOf(operator.address as `0x${string}`, data), { gasLimit: 100_000n });
    }
    await ethers.provider.send("evm_mine", []);
    const sent = [];
    // A fixed limit: an estimate made before the block would not know which reveal finalizes the job.
    for (const { operator, data } of reveals) sent.push(await operator.sendTransaction({ to, data, gasLimit: 3_000_000n }));
    await ethers.provider.send("evm_mine", []);
    return await Promise.all(sent.map((tx) => tx.wait()));
  } finally {
    await ethers.provider.send("evm_setAutomine", [true]);
  }
}

/** The fixture plus one open EVM job (id 1) requested by the consumer. */
export async function withJob() {
  const context = await loadFixture(fixture);
  await context.registry.connect(context.consumer).requestEvmBalance(HOLDER, TOKEN);
  return context;
}
