// The registries' QoS events as logs: their ABI, their decoding into `epochQos`'s shape (`qos.ts`), and the
// bookkeeping of reading them in ranges and keeping only what can still count. viem only, so the API's index,
// the web app's Network page and `npm run qos` decode the same logs the same way.
import {
  encodeAbiParameters,
  isAddressEqual,
  keccak256,
  parseAbi,
  parseEventLogs,
  type Address,
  type GetLogsReturnType,
  type Hex,
  type Log,
} from "viem";

import { IgnoreReason } from "./constants.ts";
import {
  CHALLENGER_ROLE,
  type AttestationEvent,
  type ChallengerEvent,
  type CommitEvent,
  type DelegationEvent,
  type FinalizedEvent,
  type HeartbeatEvent,
  type LateAnswerEvent,
  type LivenessWindowEvent,
  type QosEvents,
  type QosReportEvent,
  type RequestEvent,
  type RevealEvent,
  type VoteEvent,
} from "./qos.ts";

/**
 * `IQosReports.Report` as a human-readable ABI tuple: written once, for the event here and for the node's
 * `report` call, so the two cannot drift apart.
 */
export const QOS_REPORT_TUPLE =
  "(uint64 epoch, uint32 apiProbes, uint32 apiCorrect, uint32 apiErrors, uint32 apiLatencyP50Ms, uint32 apiLatencyP95Ms, uint32 evmSourceLatencyP50Ms, uint32 svmSourceLatencyP50Ms, uint32 evmHeadLagSeconds, uint32 peerRounds, (uint256 licenseId, uint32 roundsObserved, uint32 roundsSigned, uint32 medianSigningMs)[] peers)";

/** The events QoS is computed from: NodeRegistry's, VerificationRegistry's and QosReports'. */
export const QOS_EVENTS = parseAbi([
  "event Delegated(uint256 indexed licenseId, address indexed owner, address indexed operator)",
  "event Undelegated(uint256 indexed licenseId, address indexed owner, address indexed operator)",
  "event DelegationVoided(uint256 indexed licenseId, address indexed operator)",
  "event HeartbeatRecorded(address indexed operator, uint256 timestamp, uint256 capacity)",
  "event LivenessWindowUpdated(uint256 oldWindow, uint256 newWindow)",
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
  "event VerificationRequested(uint256 indexed jobId, address indexed requester, uint8 chain, bytes32 owner, bytes32 asset, uint256 fee)",
  "event VoteSubmitted(uint256 indexed jobId, uint256 indexed licenseId, address indexed operator, bytes32 resultHash, uint64 sourceBlock)",
  "event SubmissionIgnored(uint256 indexed jobId, address indexed operator, uint8 reason)",
  "event ResultsCommitted(address indexed operator, bytes32 indexed commitment)",
  "event ResultsRevealed(address indexed operator, bytes32 indexed commitment)",
  "event AttestationRecorded(address indexed payer, uint8 chain, bytes32 owner, bytes32 asset, uint256 balance, bytes32 queryResultHash, uint64 sourceBlock, uint64 issuedAt, uint256 fee, uint256[] licenseIds)",
  "event VerificationFulfilled(uint256 indexed jobId, uint8 chain, bytes32 owner, bytes32 asset, uint256 balance, bytes32 queryResultHash, uint64 sourceBlock)",
  `event QosReported(address indexed operator, uint256 indexed licenseId, uint256 indexed epoch, ${QOS_REPORT_TUPLE} report)`,
]);

/** One of those events, decoded (strictly). */
export type QosLog = GetLogsReturnType<undefined, typeof QOS_EVENTS, true, bigint, bigint>[number];

/** Most blocks one `eth_getLogs` asks for: public RPCs cap the range (commonly 10,000 blocks or fewer). */
export const LOG_RANGE_BLOCKS = 5_000n;

/** Decodes `logs` (as viem or a JSON-RPC node returns them, formatted) that are QoS events; others are left out. */
export function decodeQosLogs(logs: readonly Log[]): QosLog[] {
  return parseEventLogs<typeof QOS_EVENTS, true>({ abi: QOS_EVENTS, logs: [...logs], strict: true });
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
    commits: [] as CommitEvent[],
    reveals: [] as RevealEvent[],
    attestations: [] as AttestationEvent[],
    livenessWindows: [] as LivenessWindowEvent[],
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
      case "LivenessWindowUpdated":
        if (isAddressEqual(log.address, nodeRegistry)) events.livenessWindows.push({ ...at, window: Number(log.args.newWindow) });
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
        events.votes.push({
          ...at,
          jobId: log.args.jobId,
          licenseId: log.args.licenseId,
          resultHash: log.args.resultHash.toLowerCase(),
          transactionIndex: log.transactionIndex,
        });
        break;
      case "ResultsCommitted":
        events.commits.push({ ...at, operator: log.args.operator.toLowerCase(), commitment: log.args.commitment.toLowerCase() });
        break;
      case "ResultsRevealed":
        events.reveals.push({
          ...at,
          operator: log.args.operator.toLowerCase(),
          commitment: log.args.commitment.toLowerCase(),
          transactionIndex: log.transactionIndex,
        });
        break;
      case "AttestationRecorded":
        events.attestations.push({ ...at, issuedAt: Number(log.args.issuedAt), licenseIds: log.args.licenseIds });
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

/** The reports of `logs` emitted by `qosReports` (another contract's event of that shape is not a report). */
export function qosReportsOf(logs: readonly QosLog[], qosReports: Address): QosReportEvent[] {
  const reports: QosReportEvent[] = [];
  for (const log of logs) {
    if (log.removed || log.eventName !== "QosReported" || !isAddressEqual(log.address, qosReports)) continue;
    const { report } = log.args;
    reports.push({
      block: Number(log.blockNumber),
      logIndex: log.logIndex,
      operator: log.args.operator.toLowerCase(),
      licenseId: log.args.licenseId,
      ...report,
      epoch: Number(report.epoch),
      peers: report.peers.map((peer) => ({ ...peer })),
    });
  }
  return reports;
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
    commits: (earlier.commits ?? []).concat(later.commits ?? []),
    reveals: (earlier.reveals ?? []).concat(later.reveals ?? []),
    attestations: (earlier.attestations ?? []).concat(later.attestations ?? []),
    livenessWindows: (earlier.livenessWindows ?? []).concat(later.livenessWindows ?? []),
  };
}

/**
 * Without the heartbeats and jobs from before `timestamp`, nor those jobs' votes and outcomes, nor the
 * attestations issued before it (as the API's index prunes); every delegation, challenger grant and change
 * of the liveness window is kept: they are state, which every later event is read against (every license
 * ever delegated stays listed, and a past settlement's boundary needs the window of its time).
 */
export function pruneQosEvents(events: QosEvents, timestamp: number): QosEvents {
  const requests = events.requests.filter((event) => event.timestamp >= timestamp);
  const kept = new Set(requests.map((event) => event.jobId));
  // A commitment or a reveal matters only for the votes of a kept job, which all come after its request.
  const firstKept = requests.reduce((first, event) => Math.min(first, event.block), Infinity);
  const fromFirstKept = <T extends { block: number }>(list: readonly T[] | undefined) =>
    (list ?? []).filter((event) => event.block >= firstKept);
  return {
    delegations: events.delegations,
    heartbeats: events.heartbeats.filter((event) => event.timestamp >= timestamp),
    requests,
    votes: events.votes.filter((event) => kept.has(event.jobId)),
    lateAnswers: events.lateAnswers.filter((event) => kept.has(event.jobId)),
    finalized: events.finalized.filter((event) => kept.has(event.jobId)),
    challengers: events.challengers,
    commits: fromFirstKept(events.commits),
    reveals: fromFirstKept(events.reveals),
    // Counted by the time they were issued: an attestation is recorded at most an hour after it.
    attestations: (events.attestations ?? []).filter((event) => event.issuedAt >= timestamp),
    // A few a year at most, and an earlier window is what a past settlement's boundary needs: all kept.
    livenessWindows: events.livenessWindows ?? [],
  };
}

/** The events of blocks up to `block` (inclusive): the chain as it stood then, for a settlement's fixed boundary. */
export function qosEventsThrough(events: QosEvents, block: number): QosEvents {
  const through = <T extends { block: number }>(list: readonly T[]) => list.filter((event) => event.block <= block);
  return {
    delegations: through(events.delegations),
    heartbeats: through(events.heartbeats),
    requests: through(events.requests),
    votes: through(events.votes),
    lateAnswers: through(events.lateAnswers),
    finalized: through(events.finalized),
    challengers: through(events.challengers),
    commits: through(events.commits ?? []),
    reveals: through(events.reveals ?? []),
    attestations: through(events.attestations ?? []),
    livenessWindows: through(events.livenessWindows ?? []),
  };
}

/** The liveness window in force after block `block` by `changes`, or undefined when none of them is that early. */
export function livenessWindowAt(changes: readonly LivenessWindowEvent[], block: number): number | undefined {
  let latest: LivenessWindowEvent | undefined;
  for (const change of changes) {
    if (change.block > block) continue;
    if (latest === undefined || change.block > latest.block || (change.block === latest.block && change.logIndex > latest.logIndex))
      latest = change;
  }
  return latest?.window;
}
