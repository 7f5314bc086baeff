import { IgnoreReason } from "@avn/protocol/constants";
import type {
  ChallengerEvent,
  DelegationEvent,
  EpochFrame,
  FinalizedEvent,
  HeartbeatEvent,
  LateAnswerEvent,
  QosEvents,
  RequestEvent,
  VoteEvent,
} from "@avn/protocol/qos";
import { CHALLENGER_ROLE, epochAt } from "@avn/protocol/qos";
import {
  encodeAbiParameters,
  getAbiItem,
  isAddressEqual,
  keccak256,
  type Address,
  type GetLogsReturnType,
  type Hex,
  type PublicClient,
} from "viem";

import { nodeRegistryAbi, verificationRegistryAbi } from "../../generated/abis";

/**
 * The registries' events that quality of service is computed from (`@avn/protocol/qos`), read and decoded
 * for the page. Only the reading lives here: the figures and the score are `epochQos`'s, the same function
 * the API (`GET /api/network/nodes`) and `npm run qos` run on the same logs.
 */
export const QOS_EVENTS = [
  getAbiItem({ abi: nodeRegistryAbi, name: "Delegated" }),
  getAbiItem({ abi: nodeRegistryAbi, name: "Undelegated" }),
  getAbiItem({ abi: nodeRegistryAbi, name: "DelegationVoided" }),
  getAbiItem({ abi: nodeRegistryAbi, name: "HeartbeatRecorded" }),
  getAbiItem({ abi: nodeRegistryAbi, name: "RoleGranted" }),
  getAbiItem({ abi: nodeRegistryAbi, name: "RoleRevoked" }),
  getAbiItem({ abi: verificationRegistryAbi, name: "VerificationRequested" }),
  getAbiItem({ abi: verificationRegistryAbi, name: "VoteSubmitted" }),
  getAbiItem({ abi: verificationRegistryAbi, name: "SubmissionIgnored" }),
  getAbiItem({ abi: verificationRegistryAbi, name: "VerificationFulfilled" }),
] as const;

/** One of those events, decoded (strictly) as `getLogs` returns it. */
export type QosLog = GetLogsReturnType<undefined, typeof QOS_EVENTS, true, bigint, bigint>[number];

/** Most blocks one `eth_getLogs` asks for, as the API's index reads: public RPCs cap the range. */
export const LOG_RANGE_BLOCKS = 5_000n;

/** The previous epochs the page offers beside the current one. */
export const PREVIOUS_EPOCHS = 3;

export interface QosContracts {
  nodeRegistry: Address;
  verificationRegistry: Address;
}

/** The registries' fixed epoch grid (`EPOCHS_START`, `EPOCH_DURATION`), in seconds. */
export interface EpochGrid {
  epochsStart: number;
  epochDuration: number;
}

/**
 * What the page has read so far: the events up to `head`, and what the frames need. Kept by the query
 * between refreshes, so each refresh reads only the blocks after `head`.
 */
export interface QosSnapshot extends EpochGrid {
  head: { block: bigint; timestamp: number };
  /** `NodeRegistry.livenessWindow()` at `head`, seconds. */
  livenessWindow: number;
  events: QosEvents;
}

/**
 * The answer a job's votes agree on, as `VerificationRegistry` hashes it (its `VoteSubmitted.resultHash`):
 * keccak256(abi.encode(keccak256(abi.encode(uint8 chain, bytes32 owner, bytes32 asset)), uint256 balance,
 * bytes32 queryResultHash)). Lower-case hex.
 */
export function registryAnswerHash(subject: { chain: number; owner: Hex; asset: Hex }, balance: bigint, queryResultHash: Hex): Hex {
  const subjectHash = keccak256(
    encodeAbiParameters([{ type: "uint8" }, { type: "bytes32" }, { type: "bytes32" }], [subject.chain, subject.owner, subject.asset]),
  );
  return keccak256(
    encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }, { type: "bytes32" }], [subjectHash, balance, queryResultHash]),
  );
}

/**
 * The events of `logs` in `epochQos`'s shape. `timestamps` holds the time of each block that opened a job
 * (by block number): a job's time is its block's, which `VerificationRequested` does not carry. Grants and
 * revocations of `CHALLENGER_ROLE` count only from `nodeRegistry` (the verification registry is an
 * AccessControl too, and its roles are not governance's word on challengers).
 */
export function qosEventsOf(logs: readonly QosLog[], timestamps: ReadonlyMap<bigint, number>, nodeRegistry: Address): QosEvents {
  const events = {
    delegations: [] as DelegationEvent[],
    heartbeats: [] as HeartbeatEvent[],
    requests: [] as RequestEvent[],
    votes: [] as VoteEvent[],
    lateAnswers: [] as LateAnswerEvent[],
    finalized: [] as FinalizedEvent[],
    challengers: [] as ChallengerEvent[],
  };
  for (const log of logs) {
    if (log.removed) continue;
    const at = { block: Number(log.blockNumber), logIndex: log.logIndex };
    switch (log.eventName) {
      case "Delegated":
        events.delegations.push({ ...at, licenseId: log.args.licenseId, operator: log.args.operator.toLowerCase() });
        break;
      case "Undelegated":
      case "DelegationVoided":
        events.delegations.push({ ...at, licenseId: log.args.licenseId, operator: null });
        break;
      case "HeartbeatRecorded":
        events.heartbeats.push({ ...at, operator: log.args.operator.toLowerCase(), timestamp: Number(log.args.timestamp) });
        break;
      case "VerificationRequested": {
        const timestamp = timestamps.get(log.blockNumber);
        if (timestamp === undefined) throw new Error(`no timestamp for block ${log.blockNumber}, which opened job ${log.args.jobId}`);
        events.requests.push({ ...at, jobId: log.args.jobId, requester: log.args.requester.toLowerCase(), timestamp });
        break;
      }
      case "RoleGranted":
      case "RoleRevoked":
        if (log.args.role.toLowerCase() === CHALLENGER_ROLE && isAddressEqual(log.address, nodeRegistry)) {
          events.challengers.push({ ...at, account: log.args.account.toLowerCase(), granted: log.eventName === "RoleGranted" });
        }
        break;
      case "VoteSubmitted":
        events.votes.push({ ...at, jobId: log.args.jobId, licenseId: log.args.licenseId, resultHash: log.args.resultHash.toLowerCase() });
        break;
      case "SubmissionIgnored":
        if (log.args.reason === IgnoreReason.jobFinalized) {
          events.lateAnswers.push({ ...at, jobId: log.args.jobId, operator: log.args.operator.toLowerCase() });
        }
        break;
      case "VerificationFulfilled":
        events.finalized.push({
          ...at,
          jobId: log.args.jobId,
          resultHash: registryAnswerHash(log.args, log.args.balance, log.args.queryResultHash),
        });
        break;
    }
  }
  return events;
}

/** The blocks that opened a job in `logs`, whose timestamps `qosEventsOf` needs. */
export function requestBlocks(logs: readonly QosLog[]): bigint[] {
  return [...new Set(logs.flatMap((log) => (log.eventName === "VerificationRequested" && !log.removed ? [log.blockNumber] : [])))];
}

/** `[from, to]` cut into consecutive ranges of at most `size` blocks. */
export function blockRanges(from: bigint, to: bigint, size = LOG_RANGE_BLOCKS): Array<{ fromBlock: bigint; toBlock: bigint }> {
  const ranges: Array<{ fromBlock: bigint; toBlock: bigint }> = [];
  for (let start = from; start <= to; start += size)
    ranges.push({ fromBlock: start, toBlock: start + size - 1n < to ? start + size - 1n : to });
  return ranges;
}

/**
 * The QoS events of blocks `from` to `to`, all or none: the ranges are read one after the other, then the
 * headers of the blocks that opened jobs, side by side.
 */
export async function readQosEvents(client: PublicClient, contracts: QosContracts, from: bigint, to: bigint): Promise<QosEvents> {
  const logs: QosLog[] = [];
  for (const range of blockRanges(from, to)) {
    const batch = await client.getLogs({
      address: [contracts.nodeRegistry, contracts.verificationRegistry],
      events: QOS_EVENTS,
      strict: true,
      ...range,
    });
    // A loop, not push(...batch): a range can hold more logs than a call takes arguments.
    for (const log of batch) logs.push(log);
  }
  const timestamps = new Map<bigint, number>();
  await Promise.all(
    requestBlocks(logs).map(async (blockNumber) => {
      const block = await client.getBlock({ blockNumber });
      timestamps.set(blockNumber, Number(block.timestamp));
    }),
  );
  return qosEventsOf(logs, timestamps, contracts.nodeRegistry);
}

/** `earlier`'s events followed by `later`'s. */
export function mergeQosEvents(earlier: QosEvents, later: QosEvents): QosEvents {
  return {
    delegations: earlier.delegations.concat(later.delegations),
    heartbeats: earlier.heartbeats.concat(later.heartbeats),
    requests: earlier.requests.concat(later.requests),
    votes: earlier.votes.concat(later.votes),
    lateAnswers: earlier.lateAnswers.concat(later.lateAnswers),
    finalized: earlier.finalized.concat(later.finalized),
    challengers: earlier.challengers.concat(later.challengers),
  };
}

/**
 * Without the heartbeats and jobs from before `timestamp`, nor those jobs' votes and outcomes (as the API's
 * index prunes); every delegation and challenger grant is kept: they are state, which every later event
 * is read against (every license ever delegated stays listed).
 */
export function pruneQosEvents(events: QosEvents, timestamp: number): QosEvents {
  const requests = events.requests.filter((event) => event.timestamp >= timestamp);
  const kept = new Set(requests.map((event) => event.jobId));
  return {
    delegations: events.delegations,
    heartbeats: events.heartbeats.filter((event) => event.timestamp >= timestamp),
    requests,
    votes: events.votes.filter((event) => kept.has(event.jobId)),
    lateAnswers: events.lateAnswers.filter((event) => kept.has(event.jobId)),
    finalized: events.finalized.filter((event) => kept.has(event.jobId)),
    challengers: events.challengers,
  };
}

/**
 * The frames of the epochs the page offers, the current one first: the current epoch's (from the head's
 * time, as the API frames it: its windows counted up to the head) and up to `PREVIOUS_EPOCHS` before it,
 * each counted to its end.
 */
export function epochFrames(grid: EpochGrid, headTimestamp: number, livenessWindow: number): EpochFrame[] {
  const current = epochAt(headTimestamp, grid.epochsStart, grid.epochDuration);
  const frames: EpochFrame[] = [{ ...current, now: headTimestamp, livenessWindow }];
  for (let epoch = current.epoch - 1; epoch >= 0 && epoch >= current.epoch - PREVIOUS_EPOCHS; epoch--) {
    const start = grid.epochsStart + epoch * grid.epochDuration;
    frames.push({ epoch, start, end: start + grid.epochDuration, now: start + grid.epochDuration, livenessWindow });
  }
  return frames;
}

/**
 * Reads the blocks after `previous` (or, without it, from `fromBlock`) up to the head, and returns the new
 * snapshot. The events that no offered epoch can count any more (before the oldest one's start, less a
 * liveness window: a beat then can make a license live at its first jobs) are dropped.
 */
export async function updateQosSnapshot(
  client: PublicClient,
  contracts: QosContracts,
  fromBlock: bigint,
  previous: QosSnapshot | undefined,
): Promise<QosSnapshot> {
  const head = await client.getBlock({ blockTag: "latest" });
  const [grid, livenessWindow] = await Promise.all([
    previous ?? readEpochGrid(client, contracts.verificationRegistry),
    client.readContract({
      address: contracts.nodeRegistry,
      abi: nodeRegistryAbi,
      functionName: "livenessWindow",
      blockNumber: head.number,
    }),
  ]);
  const from = previous === undefined ? fromBlock : previous.head.block + 1n;
  const empty: QosEvents = { delegations: [], heartbeats: [], requests: [], votes: [], lateAnswers: [], finalized: [], challengers: [] };
  const added = from <= head.number ? await readQosEvents(client, contracts, from, head.number) : empty;
  const timestamp = Number(head.timestamp);
  const window = Number(livenessWindow);
  const oldest = epochFrames(grid, timestamp, window).at(-1)!;
  return {
    epochsStart: grid.epochsStart,
    epochDuration: grid.epochDuration,
    head: { block: head.number, timestamp },
    livenessWindow: window,
    events: pruneQosEvents(mergeQosEvents(previous?.events ?? empty, added), oldest.start - window),
  };
}

async function readEpochGrid(client: PublicClient, verificationRegistry: Address): Promise<EpochGrid> {
  const registry = { address: verificationRegistry, abi: verificationRegistryAbi } as const;
  const [epochsStart, epochDuration] = await Promise.all([
    client.readContract({ ...registry, functionName: "EPOCHS_START" }),
    client.readContract({ ...registry, functionName: "EPOCH_DURATION" }),
  ]);
  return { epochsStart: Number(epochsStart), epochDuration: Number(epochDuration) };
}
