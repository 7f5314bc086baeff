import type { EpochFrame, QosEvents } from "@avn/protocol/qos";
import { epochAt } from "@avn/protocol/qos";
import { blockRanges, mergeQosEvents, pruneQosEvents, QOS_EVENTS, qosEventsOf, requestBlocks, type QosLog } from "@avn/protocol/qos-logs";
import type { Address, PublicClient } from "viem";

import { nodeRegistryAbi, verificationRegistryAbi } from "../../generated/abis";

// The registries' events that quality of service is computed from, read for the page: the decoding, the
// figures and the score are `@avn/protocol`'s (`qos-logs`, `qos`), the same the API (`GET /api/network/nodes`)
// and `npm run qos` run on the same logs. Only the reading through the page's client lives here.

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
  /**
   * The heartbeats and jobs from before this time (unix seconds) may have been dropped (`pruneQosEvents`);
   * every delegation and challenger grant since the first block read is kept.
   */
  keptFrom: number;
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
  const keptFrom = oldest.start - window;
  return {
    epochsStart: grid.epochsStart,
    epochDuration: grid.epochDuration,
    head: { block: head.number, timestamp },
    livenessWindow: window,
    events: pruneQosEvents(mergeQosEvents(previous?.events ?? empty, added), keptFrom),
    // A longer window than before would move the cut earlier, but what an earlier read dropped stays dropped.
    keptFrom: Math.max(previous?.keptFrom ?? keptFrom, keptFrom),
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
