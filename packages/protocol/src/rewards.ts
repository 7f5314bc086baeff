/**
 * Epoch rewards split by score (docs/verification.md, "Epoch rewards"): each license's payout of an epoch's
 * pool, from its quality-of-service figures, and the Merkle tree whose root the nodes vote on
 * `RewardPools.voteRewardsRoot` and whose proofs the owners claim with (OpenZeppelin's StandardMerkleTree,
 * `merkle.ts`). A pure function of the figures and
 * the pool, so that every node, the API, `npm run qos` and the web app compute the same root.
 */
import type { Hex } from "viem";

import { standardLeafHash, standardMerkleTree } from "./merkle.ts";
import { QosReplay, type EpochFrame, type LicenseQos, type QosEvents } from "./qos.ts";
import { qosEventsThrough } from "./qos-logs.ts";

/** A leaf of the tree, as `RewardPools` hashes it: `abi.encode(epoch, licenseId, amount)`. */
export const REWARD_LEAF_ENCODING = ["uint256", "uint256", "uint256"] as const;

/** The root voted when nobody earned in the epoch: the pool then rolls over to a later one. */
export const NOBODY_EARNED_ROOT: Hex = `0x${"00".repeat(32)}`;

/**
 * A license's weight in the split: its points (agreeing votes it committed to before the answer was public)
 * times its score in basis points. So a license is paid for the work it did itself, scaled by how well it
 * was there: a wrong license (score 0) weighs nothing, a copier's votes earn no points, and one at a
 * fraction of the score earns that fraction per point.
 */
export function rewardWeight(figures: Pick<LicenseQos, "points" | "scoreBps">): bigint {
  return BigInt(figures.points) * BigInt(figures.scoreBps);
}

/** What the split reads of a license's figures. */
export type WeighedFigures = Pick<LicenseQos, "licenseId" | "points" | "scoreBps">;

/** One license's share of an epoch's pool. */
export interface Payout {
  licenseId: bigint;
  weight: bigint;
  /** Primary tokens: `pool * weight / totalWeight`, rounded down, so that the payouts never add up to more than the pool. */
  amount: bigint;
}

/** Every license with a non-zero payout, by license id, and the total weight they were split by. */
export function epochPayouts(figures: Iterable<WeighedFigures>, pool: bigint): { payouts: Payout[]; totalWeight: bigint } {
  const weighted = [...figures]
    .map((license) => ({ licenseId: license.licenseId, weight: rewardWeight(license) }))
    .filter((license) => license.weight > 0n)
    .sort((a, b) => (a.licenseId < b.licenseId ? -1 : a.licenseId > b.licenseId ? 1 : 0));
  const totalWeight = weighted.reduce((sum, license) => sum + license.weight, 0n);
  const payouts = weighted
    .map((license) => ({ ...license, amount: totalWeight === 0n ? 0n : (pool * license.weight) / totalWeight }))
    .filter((payout) => payout.amount > 0n);
  return { payouts, totalWeight };
}

/** An epoch's payouts, their root, and each one's proof. */
export interface RewardsTree {
  epoch: bigint;
  pool: bigint;
  totalWeight: bigint;
  /** `NOBODY_EARNED_ROOT` when no license earned anything. */
  root: Hex;
  payouts: readonly Payout[];
  /** The proof of `licenseId`'s payout, or undefined when it earned nothing. */
  proofOf(licenseId: bigint): { amount: bigint; proof: Hex[] } | undefined;
}

/** The tree of `epoch`'s payouts of `pool`, from every license's figures for that epoch. */
export function rewardsTree(epoch: bigint, pool: bigint, figures: Iterable<WeighedFigures>): RewardsTree {
  const { payouts, totalWeight } = epochPayouts(figures, pool);
  if (payouts.length === 0) {
    return { epoch, pool, totalWeight, root: NOBODY_EARNED_ROOT, payouts, proofOf: () => undefined };
  }
  const tree = standardMerkleTree(
    payouts.map((payout) => standardLeafHash(REWARD_LEAF_ENCODING, [epoch, payout.licenseId, payout.amount])),
  );
  const indexOf = new Map(payouts.map((payout, index) => [payout.licenseId, index]));
  return {
    epoch,
    pool,
    totalWeight,
    root: tree.root,
    payouts,
    proofOf(licenseId) {
      const index = indexOf.get(licenseId);
      if (index === undefined) return undefined;
      return { amount: payouts[index].amount, proof: tree.proof(index) };
    },
  };
}

/**
 * The frame an epoch is settled in: its figures count the events of the blocks before `settlementOpensAt`
 * (the epoch's end plus `RewardPools.SETTLEMENT_DELAY`, when votes on its jobs have had time to finalize),
 * and read at that time. Every node reads the same blocks, so every node computes the same root.
 */
export function settlementFrame(
  epoch: number,
  epochsStart: number,
  epochDuration: number,
  settlementOpensAt: number,
  livenessWindow: number,
): EpochFrame {
  const start = epochsStart + epoch * epochDuration;
  return { epoch, start, end: start + epochDuration, now: settlementOpensAt, livenessWindow };
}

/**
 * The last block whose timestamp is before `timestamp`, between `low` (known to be before) and `high`
 * (known to be at or after): a binary search over block headers, about log2(high − low) reads.
 */
export async function lastBlockBefore(
  timestamp: number,
  low: bigint,
  high: bigint,
  timestampOf: (block: bigint) => Promise<number>,
): Promise<bigint> {
  while (high - low > 1n) {
    const middle = (low + high) / 2n;
    if ((await timestampOf(middle)) < timestamp) low = middle;
    else high = middle;
  }
  return low;
}

/** What an epoch's settlement is computed from: the chain as it stood in the last block before it opened. */
export interface SettlementInputs {
  epoch: number;
  /** `RewardPools.settlementOf(epoch)`: the pool, and when the settlement opens (unix seconds). */
  pool: bigint;
  settlementOpensAt: number;
  /** The registry's `EPOCHS_START` and `EPOCH_DURATION`. */
  epochsStart: number;
  epochDuration: number;
  /** `NodeRegistry.livenessWindow()` in `throughBlock`. */
  livenessWindow: number;
  /** The last block before `settlementOpensAt` (`lastBlockBefore`). */
  throughBlock: number;
  /** The registries' events read from their deployment to at least `throughBlock`; later ones are left out. */
  events: QosEvents;
}

/** The epoch's payouts as every node computes them: the figures of `settlementFrame`, split by `rewardsTree`. */
export function settlementTree(inputs: SettlementInputs): RewardsTree {
  const { now, ...frame } = settlementFrame(
    inputs.epoch,
    inputs.epochsStart,
    inputs.epochDuration,
    inputs.settlementOpensAt,
    inputs.livenessWindow,
  );
  const figures = new QosReplay(frame).apply(qosEventsThrough(inputs.events, inputs.throughBlock)).figures(now);
  return rewardsTree(BigInt(inputs.epoch), inputs.pool, figures.values());
}
