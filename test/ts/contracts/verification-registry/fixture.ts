// The shared setup of the VerificationRegistry tests (one file per entry point in this folder): one network
// connection, the deploy fixture, the subjects jobs ask about, and the vote helpers.
import { network } from "hardhat";

import { addressToBytes32, balanceWord, deployProtocol, type Protocol } from "../../../helpers/protocol.ts";
import { queryResultHash } from "../../../../src/common/query-result.ts";

export const { ethers, networkHelpers } = await network.create();
export const { loadFixture, time } = networkHelpers;
export const fixture = () => deployProtocol(ethers);

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

/** The fixture plus one open EVM job (id 1) requested by the consumer. */
export async function withJob() {
  const context = await loadFixture(fixture);
  await context.registry.connect(context.consumer).requestEvmBalance(HOLDER, TOKEN);
  return context;
}
