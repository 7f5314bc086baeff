import { Interface } from "ethers";

import { IgnoreReason } from "@avn/protocol/constants";
import { CHALLENGER_ROLE } from "@avn/protocol/qos";
import type {
  QosReportEvent,
  ChallengerEvent,
  DelegationEvent,
  FinalizedEvent,
  HeartbeatEvent,
  LateAnswerEvent,
  QosEvents,
  RequestEvent,
  VoteEvent,
} from "@avn/protocol/qos";

import type { JsonRpc } from "../../chains/evm/balance-slot.ts";
import { registryAnswerHash } from "../../common/attestation-subject.ts";

// The registries' events QoS is computed from, as human-readable ABI: the API runs without compiled artifacts.
const EVENTS = new Interface([
  "event Delegated(uint256 indexed licenseId, address indexed owner, address indexed operator)",
  "event Undelegated(uint256 indexed licenseId, address indexed owner, address indexed operator)",
  "event DelegationVoided(uint256 indexed licenseId, address indexed operator)",
  "event HeartbeatRecorded(address indexed operator, uint256 timestamp, uint256 capacity)",
  "event VerificationRequested(uint256 indexed jobId, address indexed requester, uint8 chain, bytes32 owner, bytes32 asset, uint256 fee)",
  "event VoteSubmitted(uint256 indexed jobId, uint256 indexed licenseId, address indexed operator, bytes32 resultHash, uint64 sourceBlock)",
  "event SubmissionIgnored(uint256 indexed jobId, address indexed operator, uint8 reason)",
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
  "event QosReported(address indexed operator, uint256 indexed licenseId, uint256 indexed epoch, (uint64 epoch, uint32 apiProbes, uint32 apiCorrect, uint32 apiErrors, uint32 apiLatencyP50Ms, uint32 apiLatencyP95Ms, uint32 evmSourceLatencyP50Ms, uint32 svmSourceLatencyP50Ms, uint32 evmHeadLagSeconds) report)",
  "event VerificationFulfilled(uint256 indexed jobId, uint8 chain, bytes32 owner, bytes32 asset, uint256 balance, bytes32 queryResultHash, uint64 sourceBlock)",
]);
const TOPICS = EVENTS.fragments.flatMap((fragment) => (fragment.type === "event" ? [EVENTS.getEvent(fragment.format())!.topicHash] : []));

/** Most blocks one `eth_getLogs` asks for: public RPCs cap the range (commonly 10,000 blocks or fewer). */
export const LOG_RANGE_BLOCKS = 5_000;

interface RpcBlock {
  number: string;
  timestamp: string;
}

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  logIndex: string;
  removed?: boolean;
}

/** The chain's head as the index last read it. */
export interface IndexedHead {
  block: number;
  timestamp: number;
}

/**
 * The registries' QoS events (`@avn/protocol/qos`), read incrementally from `fromBlock` to the head:
 * each `update` asks only for the blocks since the last one, in ranges of `LOG_RANGE_BLOCKS`. Events that
 * can no longer count (before `keepFrom`, a timestamp) are dropped by `prune`; delegations are kept, so
 * every license ever delegated stays listed.
 */
export class QosIndex {
  readonly #rpc: JsonRpc;
  readonly #addresses: readonly string[];
  #nextBlock: number;
  readonly #events = {
    delegations: [] as DelegationEvent[],
    heartbeats: [] as HeartbeatEvent[],
    requests: [] as RequestEvent[],
    challengers: [] as ChallengerEvent[],
    votes: [] as VoteEvent[],
    lateAnswers: [] as LateAnswerEvent[],
    finalized: [] as FinalizedEvent[],
  };

  #reports: QosReportEvent[] = [];
  readonly #qosReports: string | undefined;

  constructor(rpc: JsonRpc, contracts: { nodeRegistry: string; verificationRegistry: string; qosReports?: string }, fromBlock = 0) {
    this.#rpc = rpc;
    this.#addresses = [
      contracts.nodeRegistry,
      contracts.verificationRegistry,
      ...(contracts.qosReports === undefined ? [] : [contracts.qosReports]),
    ];
    this.#qosReports = contracts.qosReports?.toLowerCase();
    this.#nextBlock = fromBlock;
  }

  get events(): QosEvents {
    return this.#events;
  }

  /** The nodes' QoS reports read so far (those of epochs before the one `pruneReports` was given are dropped). */
  get reports(): readonly QosReportEvent[] {
    return this.#reports;
  }

  /** Forgets the reports of epochs before `epoch`. */
  pruneReports(epoch: number): void {
    this.#reports = this.#reports.filter((report) => report.epoch >= epoch);
  }

  /** Reads the events of the blocks up to the head; resolves with the head they were read to. */
  async update(): Promise<IndexedHead> {
    const head = await this.#rpc.request<RpcBlock | null>("eth_getBlockByNumber", ["latest", false]);
    if (head === null) throw new Error("the L2 has no latest block");
    const headBlock = Number(BigInt(head.number));
    for (let from = this.#nextBlock; from <= headBlock; from += LOG_RANGE_BLOCKS) {
      const to = Math.min(headBlock, from + LOG_RANGE_BLOCKS - 1);
      const logs = await this.#rpc.request<RpcLog[]>("eth_getLogs", [
        { address: this.#addresses, topics: [TOPICS], fromBlock: hex(from), toBlock: hex(to) },
      ]);
      await this.#add(logs.filter((log) => log.removed !== true));
      this.#nextBlock = to + 1;
    }
    return { block: headBlock, timestamp: Number(BigInt(head.timestamp)) };
  }

  /** Forgets heartbeats and jobs from before `timestamp`, and the votes and outcomes of those jobs. */
  prune(timestamp: number): void {
    const events = this.#events;
    events.heartbeats = events.heartbeats.filter((event) => event.timestamp >= timestamp);
    events.requests = events.requests.filter((event) => event.timestamp >= timestamp);
    const kept = new Set(events.requests.map((event) => event.jobId));
    events.votes = events.votes.filter((event) => kept.has(event.jobId));
    events.lateAnswers = events.lateAnswers.filter((event) => kept.has(event.jobId));
    events.finalized = events.finalized.filter((event) => kept.has(event.jobId));
  }

  /** Adds the events of `logs` all at once, or none (a failed header read leaves the range to be read again). */
  async #add(logs: RpcLog[]): Promise<void> {
    const requestLogs: { log: RpcLog; jobId: bigint; requester: string }[] = [];
    const reports: QosReportEvent[] = [];
    const added = { delegations: [], heartbeats: [], requests: [], votes: [], lateAnswers: [], finalized: [], challengers: [] } as {
      -readonly [Kind in keyof QosEvents]: QosEvents[Kind][number][];
    };
    for (const log of logs) {
      const parsed = EVENTS.parseLog({ topics: log.topics, data: log.data });
      if (parsed === null) continue;
      const at = { block: Number(BigInt(log.blockNumber)), logIndex: Number(BigInt(log.logIndex)) };
      // ethers decodes uint as bigint, address and bytes32 as hex strings.
      const args = parsed.args.toObject() as Record<string, bigint | string>;
      const uint = (name: string) => BigInt(args[name]);
      const hexOf = (name: string) => String(args[name]).toLowerCase();
      switch (parsed.name) {
        case "Delegated":
          added.delegations.push({ ...at, licenseId: uint("licenseId"), operator: hexOf("operator") });
          break;
        case "Undelegated":
        case "DelegationVoided":
          added.delegations.push({ ...at, licenseId: uint("licenseId"), operator: null });
          break;
        case "HeartbeatRecorded":
          added.heartbeats.push({ ...at, operator: hexOf("operator"), timestamp: Number(uint("timestamp")) });
          break;
        case "VerificationRequested":
          requestLogs.push({ log, jobId: uint("jobId"), requester: hexOf("requester") });
          break;
        case "RoleGranted":
        case "RoleRevoked":
          // Only the registry's role counts: another contract's event of the same shape is not governance's word.
          if (hexOf("role") === CHALLENGER_ROLE && log.address.toLowerCase() === this.#addresses[0].toLowerCase()) {
            added.challengers.push({ ...at, account: hexOf("account"), granted: parsed.name === "RoleGranted" });
          }
          break;
        case "VoteSubmitted":
          added.votes.push({ ...at, jobId: uint("jobId"), licenseId: uint("licenseId"), resultHash: hexOf("resultHash") });
          break;
        case "SubmissionIgnored":
          if (Number(uint("reason")) === IgnoreReason.jobFinalized) {
            added.lateAnswers.push({ ...at, jobId: uint("jobId"), operator: hexOf("operator") });
          }
          break;
        case "QosReported": {
          if (log.address.toLowerCase() !== this.#qosReports) break;
          const report = parsed.args.getValue("report") as Record<string, bigint>;
          const field = (name: string) => Number(report[name]);
          reports.push({
            ...at,
            operator: hexOf("operator"),
            licenseId: uint("licenseId"),
            epoch: Number(uint("epoch")),
            apiProbes: field("apiProbes"),
            apiCorrect: field("apiCorrect"),
            apiErrors: field("apiErrors"),
            apiLatencyP50Ms: field("apiLatencyP50Ms"),
            apiLatencyP95Ms: field("apiLatencyP95Ms"),
            evmSourceLatencyP50Ms: field("evmSourceLatencyP50Ms"),
            svmSourceLatencyP50Ms: field("svmSourceLatencyP50Ms"),
            evmHeadLagSeconds: field("evmHeadLagSeconds"),
          });
          break;
        }
        case "VerificationFulfilled": {
          const subject = { chain: Number(uint("chain")), owner: hexOf("owner"), asset: hexOf("asset") };
          added.finalized.push({
            ...at,
            jobId: uint("jobId"),
            resultHash: registryAnswerHash(subject, uint("balance"), hexOf("queryResultHash")),
          });
          break;
        }
      }
    }
    // A job's time is its block's: one header per block that opened jobs, read side by side.
    const blocks = [...new Set(requestLogs.map(({ log }) => log.blockNumber))];
    const timestamps = new Map<string, number>();
    await Promise.all(
      blocks.map(async (block) => {
        const header = await this.#rpc.request<RpcBlock | null>("eth_getBlockByNumber", [block, false]);
        if (header === null) throw new Error(`the L2 has no block ${BigInt(block)} any more`);
        timestamps.set(block, Number(BigInt(header.timestamp)));
      }),
    );
    for (const { log, jobId, requester } of requestLogs) {
      added.requests.push({
        requester,
        block: Number(BigInt(log.blockNumber)),
        logIndex: Number(BigInt(log.logIndex)),
        jobId,
        timestamp: timestamps.get(log.blockNumber)!,
      });
    }
    // A loop, not push(...events): a range of blocks can hold more events than a call takes arguments.
    for (const report of reports) this.#reports.push(report);
    for (const kind of Object.keys(added) as (keyof QosEvents)[]) {
      const events = this.#events[kind] as unknown[];
      for (const event of added[kind]) events.push(event);
    }
  }
}

function hex(value: number): string {
  return `0x${value.toString(16)}`;
}
