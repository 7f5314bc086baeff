import type { QosEvents } from "@avn/protocol/qos";
import { blockRanges, livenessWindowAt } from "@avn/protocol/qos-logs";
import {
  epochPayouts,
  lastBlockBefore,
  NOBODY_EARNED_ROOT,
  settlementTree,
  type RewardsTree,
  type WeighedFigures,
} from "@avn/protocol/rewards";
import { getAbiItem, type Address, type Hex, type PublicClient } from "viem";

import { nodeRegistryAbi, rewardPoolsAbi } from "../../generated/abis";
import { formatTime } from "../../lib/format";
import { readQosEvents, type QosContracts, type QosSnapshot } from "./qos-logs";

// The epoch rewards of `RewardPools` as the Network page shows and claims them: which epochs have a pool,
// each ended epoch's payouts computed by `@avn/protocol/rewards` from the registries' events the page already
// reads (the tree every node votes the root of), where each settlement stands, and what a claim may send.

/** `RewardPools.settlementOf(epoch)`, as viem reads it. */
export interface SettlementState {
  pool: bigint;
  claimed: bigint;
  root: Hex;
  accepted: boolean;
  round: bigint;
  settlementOpensAt: bigint;
  votingClosesAt: bigint;
  claimsOpenAt: bigint;
}

/** `IRewardPools.Claim`: one license's payout of one epoch, with its proof under the accepted root. */
export interface RewardClaim {
  epoch: bigint;
  licenseId: bigint;
  amount: bigint;
  proof: readonly Hex[];
}

/** Each license's payout of `pool` by `figures` (points × score), by license id: absent means none. */
export function payoutsByLicense(figures: Iterable<WeighedFigures>, pool: bigint): Map<bigint, bigint> {
  return new Map(epochPayouts(figures, pool).payouts.map((payout) => [payout.licenseId, payout.amount]));
}

const FUNDED = getAbiItem({ abi: rewardPoolsAbi, name: "EpochRewardsFunded" });
const ROLLED_OVER = getAbiItem({ abi: rewardPoolsAbi, name: "EpochRewardsRolledOver" });

/** The pools' funding and roll-over events read so far, up to `head`: kept between refreshes, read on from there. */
export interface PoolEvents {
  head: bigint;
  funded: bigint[];
  rolledOver: Array<{ fromEpoch: bigint; toEpoch: bigint }>;
}

/**
 * Reads `rewardPools`' `EpochRewardsFunded` and `EpochRewardsRolledOver` of the blocks after `previous` (or,
 * without it, from `fromBlock`) up to the head, in the ranges the QoS events are read in.
 */
export async function updatePoolEvents(
  client: PublicClient,
  rewardPools: Address,
  fromBlock: bigint,
  previous: PoolEvents | undefined,
): Promise<PoolEvents> {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const funded = [...(previous?.funded ?? [])];
  const rolledOver = [...(previous?.rolledOver ?? [])];
  for (const range of blockRanges(previous === undefined ? fromBlock : previous.head + 1n, head)) {
    const logs = await client.getLogs({ address: rewardPools, events: [FUNDED, ROLLED_OVER], strict: true, ...range });
    for (const log of logs) {
      if (log.removed) continue;
      if (log.eventName === "EpochRewardsFunded") funded.push(log.args.epoch);
      else rolledOver.push({ fromEpoch: log.args.fromEpoch, toEpoch: log.args.toEpoch });
    }
  }
  return { head, funded, rolledOver };
}

/**
 * The epochs that hold a pool by `events`, ascending: those funded and those a pool rolled over to, less those
 * rolled over from (their pool moved on). `settlementOf` says the rest (a pool of 0 is none).
 */
export function epochsWithPools(events: Pick<PoolEvents, "funded" | "rolledOver">): bigint[] {
  const epochs = new Set([...events.funded, ...events.rolledOver.map((roll) => roll.toEpoch)]);
  for (const roll of events.rolledOver) epochs.delete(roll.fromEpoch);
  return [...epochs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Whether `snapshot` still holds every event the figures of `epoch` count, with liveness window `window`: its
 * heartbeats from a window before its start on, and its jobs (the page drops what the epochs it offers no longer
 * need, `pruneQosEvents`).
 */
export function holdsEpoch(
  snapshot: Pick<QosSnapshot, "keptFrom" | "epochsStart" | "epochDuration">,
  epoch: number,
  window: number,
): boolean {
  return snapshot.keptFrom <= snapshot.epochsStart + epoch * snapshot.epochDuration - window;
}

/** An ended epoch's payouts as the page computes them, and what they were computed from. */
export interface ComputedSettlement {
  /** The last block before the settlement opened: the events after it are left out, as every node leaves them out. */
  throughBlock: bigint;
  /** `NodeRegistry.livenessWindow()` in that block. */
  livenessWindow: number;
  tree: RewardsTree;
  /** The epoch's events were older than the page keeps, and were read for it apart. */
  readApart: boolean;
}

/**
 * `epoch`'s payouts as every node computes the root it votes (`settlementTree`): the events of the blocks
 * before the settlement opened, framed with the liveness window of the last of them. The boundary is found by
 * its timestamp over block headers (`lastBlockBefore`), the window from the snapshot's record of its changes
 * (a historical `eth_call` only when the snapshot has none that early). The events are the snapshot's while
 * it holds the epoch's; an older epoch's heartbeats and jobs are read apart, from a liveness window before its
 * start to the boundary, beside the snapshot's delegations and challenger grants (all of which it keeps).
 * Throws until the snapshot's head has reached the settlement's opening: before that the figures may change.
 */
export async function computeSettlement(
  client: PublicClient,
  contracts: QosContracts,
  snapshot: QosSnapshot,
  epoch: number,
  state: Pick<SettlementState, "pool" | "settlementOpensAt">,
  fromBlock: bigint,
): Promise<ComputedSettlement> {
  const opensAt = Number(state.settlementOpensAt);
  if (snapshot.head.timestamp < opensAt)
    throw new Error(`Epoch ${epoch}'s settlement opens ${formatTime(opensAt)}: its payouts are not final before that.`);
  const timestamps = new Map<bigint, number>();
  const timestampOf = async (blockNumber: bigint) => {
    let timestamp = timestamps.get(blockNumber);
    if (timestamp === undefined) {
      timestamp = Number((await client.getBlock({ blockNumber })).timestamp);
      timestamps.set(blockNumber, timestamp);
    }
    return timestamp;
  };
  // The head's time is at or after the opening, so the boundary is at most the head, whose events the snapshot holds.
  const throughBlock = await lastBlockBefore(opensAt, fromBlock, snapshot.head.block + 1n, timestampOf);
  const livenessWindow =
    livenessWindowAt(snapshot.events.livenessWindows ?? [], Number(throughBlock)) ??
    Number(
      await client.readContract({
        address: contracts.nodeRegistry,
        abi: nodeRegistryAbi,
        functionName: "livenessWindow",
        blockNumber: throughBlock,
      }),
    );
  const held = holdsEpoch(snapshot, epoch, livenessWindow);
  let events: QosEvents = snapshot.events;
  if (!held) {
    const since = snapshot.epochsStart + epoch * snapshot.epochDuration - livenessWindow;
    const from = await lastBlockBefore(since, fromBlock, throughBlock + 1n, timestampOf);
    const read = await readQosEvents(client, contracts, from, throughBlock);
    events = { ...read, delegations: snapshot.events.delegations, challengers: snapshot.events.challengers };
  }
  const tree = settlementTree({
    epoch,
    pool: state.pool,
    settlementOpensAt: opensAt,
    epochsStart: snapshot.epochsStart,
    epochDuration: snapshot.epochDuration,
    livenessWindow,
    throughBlock: Number(throughBlock),
    events,
  });
  return { throughBlock, livenessWindow, tree, readApart: !held };
}

const sameRoot = (a: Hex, b: Hex) => a.toLowerCase() === b.toLowerCase();

/**
 * Where `state`'s settlement stands at the L2's time `now`, in words. `votes` is the tally of the page's own
 * root while the nodes vote, with the node registry's quorum.
 */
export function settlementStatus(state: SettlementState, now: number, votes?: { forRoot: bigint; quorum: bigint }): string {
  if (now < Number(state.settlementOpensAt)) return `Settlement opens ${formatTime(state.settlementOpensAt)}`;
  if (!state.accepted) {
    if (now >= Number(state.votingClosesAt))
      return `No root accepted before voting closed (${formatTime(state.votingClosesAt)}): the pool can roll over to a later epoch`;
    const tally = votes === undefined ? "" : `; ${votes.forRoot} of the ${votes.quorum} votes needed for this page's root`;
    return `Nodes voting the root until ${formatTime(state.votingClosesAt)}${tally}`;
  }
  if (sameRoot(state.root, NOBODY_EARNED_ROOT)) return "Accepted: nobody earned, the pool can roll over to a later epoch";
  if (now < Number(state.claimsOpenAt)) return `Root accepted; claims open ${formatTime(state.claimsOpenAt)}`;
  return "Root accepted; claims open";
}

/** One of the wallet's licenses in an epoch: whether its payout was claimed (undefined while unread). */
export interface OwnedLicense {
  licenseId: bigint;
  claimed: boolean | undefined;
}

/**
 * What claiming `epoch` would send: the wallet's unclaimed payouts with their proofs, or why nothing can be
 * sent. A claim goes only when the accepted root is the page's own (the proofs are under it), the dispute
 * period is over by the L2's time `now`, and the license's payout is not claimed yet: the contract would
 * refuse anything else.
 */
export function claimStep(
  epoch: bigint,
  state: SettlementState,
  now: number,
  tree: RewardsTree | undefined,
  licenses: readonly OwnedLicense[],
): { claims: RewardClaim[] } | { reason: string } {
  if (now < Number(state.settlementOpensAt)) return { reason: `The settlement opens ${formatTime(state.settlementOpensAt)}.` };
  if (!state.accepted) return { reason: "No root is accepted yet: claims open once the nodes' root is, and its dispute period is over." };
  if (tree === undefined) return { reason: "Computing this epoch's payouts…" };
  if (!sameRoot(state.root, tree.root))
    return { reason: "The accepted root differs from this page's computation: its proofs would be refused, so the page sends none." };
  if (now < Number(state.claimsOpenAt)) return { reason: `Claims open ${formatTime(state.claimsOpenAt)}, after the dispute period.` };
  const earned = licenses.flatMap((license) => {
    const payout = tree.proofOf(license.licenseId);
    return payout === undefined ? [] : [{ license, payout }];
  });
  if (earned.length === 0) return { reason: "Your licenses earned nothing in this epoch." };
  if (earned.some(({ license }) => license.claimed === undefined)) return { reason: "Reading which payouts are claimed…" };
  const claims = earned
    .filter(({ license }) => license.claimed === false)
    .map(({ license, payout }) => ({ epoch, licenseId: license.licenseId, amount: payout.amount, proof: payout.proof }));
  if (claims.length === 0) return { reason: "Your licenses' rewards of this epoch are claimed." };
  return { claims };
}
