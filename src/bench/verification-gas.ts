import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import type { NetworkHelpers } from "@nomicfoundation/hardhat-network-helpers/types";
import { hexlify, randomBytes, toBeHex, zeroPadValue, type ContractTransactionResponse } from "ethers";

import { revealCommitmentOf } from "@avn/protocol/commit-reveal";
import { rewardsTree } from "@avn/protocol/rewards";

import { queryResultHash } from "../common/query-result.ts";

import { deployProtocolContracts } from "../deploy/contracts.ts";
import { gasOf, type GasRow } from "./gas.ts";
import { DAY, E18 } from "@avn/protocol/units";

export const BATCH_SIZE = 20;

/**
 * The contracts the gas benchmarks measure, deployed on the connected network by module Protocol at
 * `quorum` (fee 1 token, licenses 1 token each up to 1,000, epochs of 7 days; the module's liveness window
 * and job timeout). The admin (account 0, the deployer) holds the whole supply; the admin, the license owner and
 * the consumer hold and have approved primary tokens; the consumer has 10,000 staked tokens of collateral.
 */
export async function deployGasBenchProtocol(ethers: HardhatEthers, quorum: bigint) {
  const [admin, owner, operatorA, operatorB, operatorC, consumer] = await ethers.getSigners();
  const { primary, staked, ...contracts } = await deployProtocolContracts(ethers, {
    tokens: { supplyRecipient: admin.address, admin: admin.address, forfeitRecipient: admin.address, adminTransferDelay: 0n },
    protocol: {
      admin: admin.address,
      treasury: admin.address,
      adminTransferDelay: 0n,
      licenseMaxSupply: 1_000n,
      licensePriceTiers: [{ upToSupply: 1_000n, price: E18 }],
      requestFee: E18,
      quorum,
      // Pinned, not the module's default: the measurements below move time by 7 days to the next epoch.
      epochDuration: 7n * DAY,
    },
  });
  for (const payer of [owner, consumer, admin]) {
    if (payer !== admin) await primary.transfer(payer.address, 100_000n * E18);
    for (const spender of [contracts.license, contracts.registry])
      await primary.connect(payer).approve(await spender.getAddress(), ethers.MaxUint256);
  }
  await contracts.registry.connect(consumer).stakeCollateral(consumer.address, 10_000n * E18);
  return { ...contracts, primary, staked, admin, owner, operators: [operatorA, operatorB, operatorC], consumer };
}

/**
 * Deploys the contracts on the connected network and measures the gas of the node and consumer
 * operations as whole mined transactions (21,000 base cost included). Rows named "… per job" divide a
 * batch's gas by its size.
 */
export async function measureVerificationGas(ethers: HardhatEthers, networkHelpers: NetworkHelpers): Promise<GasRow[]> {
  const { primary, license, nodeRegistry, registry, rewardPools, admin, owner, operators, consumer } = await deployGasBenchProtocol(
    ethers,
    3n,
  );
  const [operatorA, operatorB, operatorC] = operators;
  const [freshOperator, batchOperator] = (await ethers.getSigners()).slice(6, 8);
  await license.connect(owner).buy(14n, ethers.MaxUint256); // ids 1..14

  const rows: GasRow[] = [];
  const measure = async (operation: string, tx: Promise<ContractTransactionResponse>, divisor = 1n) =>
    rows.push({ operation, gasUsed: (await gasOf(tx)) / divisor });

  const registryAsOwner = nodeRegistry.connect(owner);
  await measure("NodeRegistry.delegate (1 license, new operator)", registryAsOwner.delegate([1n], freshOperator.address));
  await measure(
    "NodeRegistry.delegate (10 licenses)",
    registryAsOwner.delegate([2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n, 11n], batchOperator.address),
  );
  await registryAsOwner.delegate([12n], operatorA.address);
  await registryAsOwner.delegate([13n], operatorB.address);
  await registryAsOwner.delegate([14n], operatorC.address);
  await measure("NodeRegistry.heartbeat (first)", nodeRegistry.connect(operatorA)["heartbeat(uint32)"](120));
  await measure("NodeRegistry.heartbeat (again)", nodeRegistry.connect(operatorA)["heartbeat(uint32)"](120));
  await nodeRegistry.connect(operatorB)["heartbeat(uint32)"](120);
  await nodeRegistry.connect(operatorC)["heartbeat(uint32)"](120);

  const holder = ethers.Wallet.createRandom().address;
  const token = await primary.getAddress();
  const request = () => registry.connect(consumer).requestEvmBalance(holder, token);
  const vote = (jobId: bigint, licenseId: bigint) => ({
    jobId,
    licenseIds: [licenseId],
    owner: zeroPadValue(holder, 32),
    asset: zeroPadValue(token, 32),
    balance: 183n,
    queryResultHash: queryResultHash(toBeHex(183n, 32)),
    sourceBlock: 1_000n,
  });
  const [asA, asB, asC] = [registry.connect(operatorA), registry.connect(operatorB), registry.connect(operatorC)];

  await measure("VerificationRegistry.requestEvmBalance", request()); // job 1
  await measure("VerificationRegistry.submitResults (1 job, first vote)", asA.submitResults([vote(1n, 12n)]));
  await measure("VerificationRegistry.submitResults (1 job, second vote)", asB.submitResults([vote(1n, 13n)]));
  // The licenses' first earnings ever: their accounts, the epoch's vote total and the subject's latest
  // result are fresh slots.
  await measure("VerificationRegistry.submitResults (finalizing vote, quorum 3, licenses' first)", asC.submitResults([vote(1n, 14n)]));
  await request(); // job 2: the same licenses again, in the same epoch
  await asA.submitResults([vote(2n, 12n)]);
  await asB.submitResults([vote(2n, 13n)]);
  await measure("VerificationRegistry.submitResults (finalizing vote, quorum 3, warm epoch)", asC.submitResults([vote(2n, 14n)]));

  const firstBatchJob = await registry.nextJobId();
  for (let i = 0; i < BATCH_SIZE; i++) await request();
  const jobIds = Array.from({ length: BATCH_SIZE }, (_, i) => firstBatchJob + BigInt(i));
  await measure(
    `VerificationRegistry.submitResults (batch of ${BATCH_SIZE}, first votes, per job)`,
    registry.connect(operatorA).submitResults(jobIds.map((jobId) => vote(jobId, 12n))),
    BigInt(BATCH_SIZE),
  );
  await measure(
    `VerificationRegistry.submitResults (batch of ${BATCH_SIZE}, second votes, per job)`,
    registry.connect(operatorB).submitResults(jobIds.map((jobId) => vote(jobId, 13n))),
    BigInt(BATCH_SIZE),
  );
  await measure(
    `VerificationRegistry.submitResults (batch of ${BATCH_SIZE}, finalizing votes, per job)`,
    registry.connect(operatorC).submitResults(jobIds.map((jobId) => vote(jobId, 14n))),
    BigInt(BATCH_SIZE),
  );

  // The same votes as the nodes cast them, commit then reveal (docs/verification.md, "No credit for copying"):
  // per job, the commit's share and the reveal's, beside the plain batch rows above. At 16 (the nodes'
  // MAX_SUBMISSIONS_PER_TX) and 20 answers a transaction, and one alone.
  const committedVotes = async (operator: typeof operatorA, licenseId: bigint, jobs: bigint[]) => {
    const reveal = registry.interface.encodeFunctionData("revealResults", [
      hexlify(randomBytes(32)),
      jobs.map((jobId) => vote(jobId, licenseId)),
    ]) as `0x${string}`;
    const commit = await gasOf(registry.connect(operator).commitResults(revealCommitmentOf(operator.address as `0x${string}`, reveal)));
    if (jobs.length === 1 && licenseId === 12n) rows.push({ operation: "VerificationRegistry.commitResults (alone)", gasUsed: commit });
    return commit + (await gasOf(operator.sendTransaction({ to: await registry.getAddress(), data: reveal })));
  };
  for (const size of [1, 16, BATCH_SIZE]) {
    if (size === 1) {
      // The plain path on one job alone in the same state as the commit–reveal row below (a later job of a
      // warm epoch), for the side by side: the rows at the top are the registry's very first job.
      const plainJob = await registry.nextJobId();
      await request();
      await measure("VerificationRegistry.submitResults (1 job, first vote, a later job)", asA.submitResults([vote(plainJob, 12n)]));
      await measure("VerificationRegistry.submitResults (1 job, second vote, a later job)", asB.submitResults([vote(plainJob, 13n)]));
      await measure("VerificationRegistry.submitResults (1 job, finalizing vote, a later job)", asC.submitResults([vote(plainJob, 14n)]));
    }
    const first = await registry.nextJobId();
    for (let i = 0; i < size; i++) await request();
    const jobs = Array.from({ length: size }, (_, i) => first + BigInt(i));
    const label = size === 1 ? "1 job" : `batch of ${size}`;
    const perJob = (gas: bigint) => gas / BigInt(size);
    rows.push({
      operation: `VerificationRegistry.commitResults + revealResults (${label}, first votes, per job)`,
      gasUsed: perJob(await committedVotes(operatorA, 12n, jobs)),
    });
    rows.push({
      operation: `VerificationRegistry.commitResults + revealResults (${label}, second votes, per job)`,
      gasUsed: perJob(await committedVotes(operatorB, 13n, jobs)),
    });
    rows.push({
      operation: `VerificationRegistry.commitResults + revealResults (${label}, finalizing votes, per job)`,
      gasUsed: perJob(await committedVotes(operatorC, 14n, jobs)),
    });
    if (size === 16) {
      // The plain path at the nodes' batch size, for the side by side.
      const plainFirst = await registry.nextJobId();
      for (let i = 0; i < size; i++) await request();
      const plain = Array.from({ length: size }, (_, i) => plainFirst + BigInt(i));
      await measure(
        `VerificationRegistry.submitResults (batch of 16, first votes, per job)`,
        asA.submitResults(plain.map((jobId) => vote(jobId, 12n))),
        16n,
      );
      await measure(
        `VerificationRegistry.submitResults (batch of 16, second votes, per job)`,
        asB.submitResults(plain.map((jobId) => vote(jobId, 13n))),
        16n,
      );
      await measure(
        `VerificationRegistry.submitResults (batch of 16, finalizing votes, per job)`,
        asC.submitResults(plain.map((jobId) => vote(jobId, 14n))),
        16n,
      );
    }
  }

  // Quorum 2, as the local network runs: one agreeing license fewer to pay.
  await nodeRegistry.connect(admin).setQuorum(2n);
  const quorumTwoJob = await registry.nextJobId();
  await request();
  await asA.submitResults([vote(quorumTwoJob, 12n)]);
  await measure("VerificationRegistry.submitResults (finalizing vote, quorum 2, warm epoch)", asB.submitResults([vote(quorumTwoJob, 13n)]));
  await nodeRegistry.connect(admin).setQuorum(3n);

  await measure("VerificationRegistry.claimFees (1 license)", registry.connect(owner).claimFees([12n]));
  await primary.connect(admin).approve(await rewardPools.getAddress(), ethers.MaxUint256);
  await rewardPools.connect(admin).fundEpochRewards(0n, 1_000n * E18);
  await networkHelpers.time.increase(7n * DAY);
  for (const operator of [operatorA, operatorB, operatorC]) await nodeRegistry.connect(operator)["heartbeat(uint32)"](120);
  const nextEpochJob = await registry.nextJobId();
  await request();
  await asA.submitResults([vote(nextEpochJob, 12n)]);
  await asB.submitResults([vote(nextEpochJob, 13n)]);
  await measure(
    "VerificationRegistry.submitResults (finalizing vote, quorum 3, first of an epoch)",
    asC.submitResults([vote(nextEpochJob, 14n)]),
  );

  // Settling epoch 0: each node votes the root once (quorum 3 here), then each owner claims with a proof.
  const settlement = await rewardPools.settlementOf(0n);
  await networkHelpers.time.increaseTo(settlement.settlementOpensAt);
  for (const operator of [operatorA, operatorB, operatorC]) await nodeRegistry.connect(operator)["heartbeat(uint32)"](120);
  const tree = rewardsTree(0n, settlement.pool, [
    { licenseId: 12n, points: 3, scoreBps: 10_000 },
    { licenseId: 13n, points: 3, scoreBps: 9_000 },
    { licenseId: 14n, points: 2, scoreBps: 5_000 },
  ]);
  await measure("RewardPools.voteRewardsRoot (1 license)", rewardPools.connect(operatorA).voteRewardsRoot(0n, tree.root, [12n]));
  await rewardPools.connect(operatorB).voteRewardsRoot(0n, tree.root, [13n]);
  await measure(
    "RewardPools.voteRewardsRoot (1 license, accepting the root)",
    rewardPools.connect(operatorC).voteRewardsRoot(0n, tree.root, [14n]),
  );
  await networkHelpers.time.increase(await rewardPools.DISPUTE_PERIOD());
  const payout = tree.proofOf(12n)!;
  await measure(
    "RewardPools.claimRewards (1 license, 3 payouts)",
    rewardPools.connect(owner).claimRewards([{ epoch: 0n, licenseId: 12n, amount: payout.amount, proof: payout.proof }]),
  );
  return rows;
}

/** The gas targets, by operation name prefix. */
export const GAS_TARGETS: Array<{ operation: string; atMost: bigint; reference: string }> = [
  {
    operation: "NodeRegistry.delegate (1 license, new operator)",
    atMost: 68_499n,
    reference: "< half of delegate.xyz v2 delegateERC721 (~137k)",
  },
  {
    operation: `VerificationRegistry.submitResults (batch of ${BATCH_SIZE}, first votes, per job)`,
    atMost: 45_000n,
    reference: "<= 45k per job at batch size 20",
  },
  { operation: "VerificationRegistry.requestEvmBalance", atMost: 120_000n, reference: "<= 120k (178.5k before the result commitment)" },
  {
    operation: "VerificationRegistry.submitResults (finalizing vote, quorum 3, warm epoch)",
    atMost: 150_000n,
    reference: "<= 150k in a warm epoch",
  },
  {
    operation: "VerificationRegistry.submitResults (finalizing vote, quorum 3, first of an epoch)",
    atMost: 250_000n,
    reference: "<= 250k for the first of an epoch",
  },
];

/** Formats rows as a table, with the target and whether it is met where `targets` set one. */
export function formatTargetTable(rows: GasRow[], targets = GAS_TARGETS, heading = "operation"): string {
  const width = Math.max(heading.length, ...rows.map((row) => row.operation.length));
  const lines = [`${heading.padEnd(width)}  ${"gas".padStart(8)}  target`];
  for (const row of rows) {
    const target = targets.find((candidate) => candidate.operation === row.operation);
    const verdict = target === undefined ? "" : `${row.gasUsed <= target.atMost ? "met" : "MISSED"}: ${target.reference}`;
    lines.push(`${row.operation.padEnd(width)}  ${row.gasUsed.toString().padStart(8)}  ${verdict}`);
  }
  return lines.join("\n");
}
