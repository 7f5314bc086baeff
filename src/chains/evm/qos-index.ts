import type { QosEvents, QosReportEvent } from "@avn/protocol/qos";
import {
  blockRanges,
  decodeQosLogs,
  mergeQosEvents,
  pruneQosEvents,
  QOS_EVENTS,
  qosEventsOf,
  qosReportsOf,
  requestBlocks,
} from "@avn/protocol/qos-logs";
import { toEventSelector, type Address, type Hex, type Log } from "viem";

import type { JsonRpc } from "./balance-slot.ts";

const TOPICS = QOS_EVENTS.map((event) => toEventSelector(event));

interface RpcBlock {
  number: Hex;
  timestamp: Hex;
}

interface RpcLog {
  address: Address;
  topics: [Hex, ...Hex[]];
  data: Hex;
  blockHash: Hex;
  blockNumber: Hex;
  logIndex: Hex;
  transactionHash: Hex;
  transactionIndex: Hex;
  removed?: boolean;
}

/** The chain's head as the index last read it. */
export interface IndexedHead {
  block: number;
  timestamp: number;
}

const NO_EVENTS: QosEvents = { delegations: [], heartbeats: [], requests: [], votes: [], lateAnswers: [], finalized: [], challengers: [] };

/**
 * The registries' QoS events (`@avn/protocol/qos-logs`, decoded as the web app decodes them), read
 * incrementally from `fromBlock` to the head: each `update` asks only for the blocks since the last one, in
 * ranges of `LOG_RANGE_BLOCKS`, and adds a range's events all at once or not at all. `prune` drops what can
 * no longer count; delegations, challenger grants and liveness window changes are kept (state every later
 * event is read against).
 */
export class QosIndex {
  readonly #rpc: JsonRpc;
  readonly #addresses: readonly Address[];
  readonly #nodeRegistry: Address;
  readonly #qosReports: Address | undefined;
  #nextBlock: bigint;
  #events: QosEvents = NO_EVENTS;
  #reports: QosReportEvent[] = [];
  #added: QosEvents = NO_EVENTS;

  constructor(rpc: JsonRpc, contracts: { nodeRegistry: string; verificationRegistry: string; qosReports?: string }, fromBlock = 0) {
    this.#rpc = rpc;
    this.#nodeRegistry = contracts.nodeRegistry as Address;
    this.#qosReports = contracts.qosReports as Address | undefined;
    this.#addresses = [
      contracts.nodeRegistry,
      contracts.verificationRegistry,
      ...(contracts.qosReports === undefined ? [] : [contracts.qosReports]),
    ] as Address[];
    this.#nextBlock = BigInt(fromBlock);
  }

  get events(): QosEvents {
    return this.#events;
  }

  /** The nodes' QoS reports read so far (those of epochs before the one `pruneReports` was given are dropped). */
  get reports(): readonly QosReportEvent[] {
    return this.#reports;
  }

  /** Reads the events of the blocks up to the head; resolves with the head they were read to. */
  async update(): Promise<IndexedHead> {
    const head = await this.#rpc.request<RpcBlock | null>("eth_getBlockByNumber", ["latest", false]);
    if (head === null) throw new Error("the L2 has no latest block");
    const headBlock = BigInt(head.number);
    for (const range of this.#nextBlock <= headBlock ? blockRanges(this.#nextBlock, headBlock) : []) {
      const logs = await this.#rpc.request<RpcLog[]>("eth_getLogs", [
        { address: this.#addresses, topics: [TOPICS], fromBlock: hex(range.fromBlock), toBlock: hex(range.toBlock) },
      ]);
      await this.#add(logs.map(formatLog));
      this.#nextBlock = range.toBlock + 1n;
    }
    return { block: Number(headBlock), timestamp: Number(BigInt(head.timestamp)) };
  }

  /**
   * The events added since the last call (in chain order after every event added before), which a replay
   * of `events` can apply alone; an update that failed half-way leaves its ranges read so far here.
   */
  takeAdded(): QosEvents {
    const added = this.#added;
    this.#added = NO_EVENTS;
    return added;
  }

  /** Forgets heartbeats, jobs and attestations from before `timestamp`, and the votes and outcomes of those jobs. */
  prune(timestamp: number): void {
    this.#events = pruneQosEvents(this.#events, timestamp);
  }

  /** Forgets the reports of epochs before `epoch`. */
  pruneReports(epoch: number): void {
    this.#reports = this.#reports.filter((report) => report.epoch >= epoch);
  }

  /** Adds the events of `logs` all at once, or none (a failed header read leaves the range to be read again). */
  async #add(logs: Log[]): Promise<void> {
    const decoded = decodeQosLogs(logs);
    // A job's time is its block's: one header per block that opened jobs, read side by side.
    const timestamps = new Map<bigint, number>();
    await Promise.all(
      requestBlocks(decoded).map(async (block) => {
        const header = await this.#rpc.request<RpcBlock | null>("eth_getBlockByNumber", [hex(block), false]);
        if (header === null) throw new Error(`the L2 has no block ${block} any more`);
        timestamps.set(block, Number(BigInt(header.timestamp)));
      }),
    );
    const fresh = qosEventsOf(decoded, timestamps, this.#nodeRegistry);
    this.#events = mergeQosEvents(this.#events, fresh);
    this.#added = mergeQosEvents(this.#added, fresh);
    if (this.#qosReports !== undefined) this.#reports = this.#reports.concat(qosReportsOf(decoded, this.#qosReports));
  }
}

/** A JSON-RPC log as viem's decoder takes it (quantities as numbers). */
function formatLog(log: RpcLog): Log {
  return {
    address: log.address,
    topics: log.topics,
    data: log.data,
    blockHash: log.blockHash,
    blockNumber: BigInt(log.blockNumber),
    logIndex: Number(BigInt(log.logIndex)),
    transactionHash: log.transactionHash,
    transactionIndex: Number(BigInt(log.transactionIndex)),
    removed: log.removed === true,
  };
}

function hex(value: bigint): Hex {
  return `0x${value.toString(16)}`;
}
