/**
 * Node quality of service, from what the chain already records: each license's figures for one epoch and
 * the score they give (docs/verification.md, "Quality of service"). A pure function of the registries'
 * events, so that the API (`GET /api/network/nodes`), `npm run qos` and the web app compute exactly the
 * same figures from the same logs, and anyone can recompute them from a public RPC.
 */

/** Basis points: 10,000 is the whole. */
export const BPS = 10_000;

/** Uptime at or above this counts as full uptime (Aethir pays its uptime bonus only above 95%). */
export const FULL_UPTIME_BPS = 9_500;

/** Disagreeing votes in one epoch from which the license's score for that epoch is 0 (Aethir: two wrong results). */
export const WRONG_ANSWERS_FOR_ZERO = 2;

/**
 * Median blocks from a job's request to a license's vote that still count as on time: nodes wake on the
 * request's log and vote in the next block or the one after.
 */
export const TIMELY_VOTE_BLOCKS = 2;

/** Where an event sits in the chain: events are applied in this order. */
export interface ChainPosition {
  block: number;
  logIndex: number;
}

/** `NodeRegistry.Delegated` (operator set) or `Undelegated` / `DelegationVoided` (operator null). */
export interface DelegationEvent extends ChainPosition {
  licenseId: bigint;
  operator: string | null;
}

/** `NodeRegistry.HeartbeatRecorded`: `timestamp` is the block's, which the event carries. */
export interface HeartbeatEvent extends ChainPosition {
  operator: string;
  timestamp: number;
}

/** `VerificationRegistry.VerificationRequested`, with its block's timestamp. */
export interface RequestEvent extends ChainPosition {
  jobId: bigint;
  requester: string;
  timestamp: number;
}

/**
 * `NodeRegistry.RoleGranted` / `RoleRevoked` of `CHALLENGER_ROLE`: the accounts governance lets open
 * challenge jobs, the network's benchmark of its nodes.
 */
export interface ChallengerEvent extends ChainPosition {
  account: string;
  granted: boolean;
}

/**
 * The role, on NodeRegistry, of the accounts whose jobs are challenges: keccak256("CHALLENGER_ROLE"). Any
 * role id can be granted through OpenZeppelin's AccessControl, so governance grants it without the
 * contract declaring it (docs/verification.md, "Benchmark testing").
 */
export const CHALLENGER_ROLE = "0xe752add323323eb13e36c71ee508dfd16d74e9e4c4fd78786ba97989e5e13818";

/** `VerificationRegistry.VoteSubmitted`. */
export interface VoteEvent extends ChainPosition {
  jobId: bigint;
  licenseId: bigint;
  resultHash: string;
}

/**
 * `VerificationRegistry.SubmissionIgnored` with reason `JobFinalized`: an operator's answer that came after
 * the quorum had already finalized the job. In the finalization's own block, it answered in time and was
 * just not among the first; later, it counts for nothing.
 */
export interface LateAnswerEvent extends ChainPosition {
  jobId: bigint;
  operator: string;
}

/** `VerificationRegistry.VerificationFulfilled`: the answer the quorum agreed on, as the votes hash it. */
export interface FinalizedEvent extends ChainPosition {
  jobId: bigint;
  resultHash: string;
}

/** The registries' events that QoS is computed from, in any order. */
export interface QosEvents {
  delegations: readonly DelegationEvent[];
  heartbeats: readonly HeartbeatEvent[];
  requests: readonly RequestEvent[];
  votes: readonly VoteEvent[];
  lateAnswers: readonly LateAnswerEvent[];
  finalized: readonly FinalizedEvent[];
  challengers: readonly ChallengerEvent[];
}

/** The epoch the figures are for, and the chain's time now (unix seconds). */
export interface EpochFrame {
  epoch: number;
  /** First second of the epoch: `EPOCHS_START + epoch * EPOCH_DURATION`. */
  start: number;
  /** First second after it. */
  end: number;
  /** The latest block's timestamp: a current epoch counts its windows up to here. */
  now: number;
  /** `NodeRegistry.livenessWindow()`, seconds: a license is live while its operator beat within it. */
  livenessWindow: number;
}

/** One license's figures for one epoch. Every number is an integer. */
export interface LicenseQos {
  licenseId: bigint;
  /** The operator now, or null when the license is not delegated. */
  operator: string | null;
  /** Delegated, and its operator beat within the liveness window before `now`. */
  live: boolean;
  /** Complete liveness windows of the epoch so far. */
  windows: number;
  /** Of those, the windows holding a heartbeat of the license's operator of that moment. */
  beatWindows: number;
  uptimeBps: number;
  /** Jobs opened in the epoch while the license was live (delegated, its operator within the window). */
  jobsAsked: number;
  /** Of those, the jobs the license voted on, or whose operator answered in the block the quorum finalized it. */
  jobsAnswered: number;
  participationBps: number;
  /** Votes the registry accepted from the license on jobs opened in the epoch. */
  votes: number;
  /** Of those votes on jobs since finalized: the answers equal to the quorum's, and the others. */
  agreed: number;
  disagreed: number;
  accuracyBps: number;
  /** Median blocks from request to vote (the lower middle of an even count); 0 without votes. */
  medianVoteDelayBlocks: number;
  timelinessBps: number;
  /**
   * Capacity, measured: the challenge jobs among `jobsAsked` (opened by a challenger, at random times, in
   * bursts), those the license answered, and the median blocks from request to its vote on them.
   */
  challengeJobsAsked: number;
  challengeJobsAnswered: number;
  challengeMedianVoteDelayBlocks: number;
  scoreBps: number;
}

/** Inputs of the score, each in basis points, and the epoch's disagreeing votes. */
export interface ScoreInputs {
  uptimeBps: number;
  participationBps: number;
  accuracyBps: number;
  timelinessBps: number;
  disagreed: number;
}

/**
 * The published formula: 0 from two wrong answers in the epoch; otherwise the product of uptime (full at
 * 95% and above), participation, accuracy and timeliness, in basis points, rounded down.
 */
export function scoreBps(inputs: ScoreInputs): number {
  if (inputs.disagreed >= WRONG_ANSWERS_FOR_ZERO) return 0;
  const uptime = inputs.uptimeBps >= FULL_UPTIME_BPS ? BPS : inputs.uptimeBps;
  const product = BigInt(uptime) * BigInt(inputs.participationBps) * BigInt(inputs.accuracyBps) * BigInt(inputs.timelinessBps);
  return Number(product / BigInt(BPS) ** 3n);
}

/** Full until the median delay passes `TIMELY_VOTE_BLOCKS`, then inversely proportional to it. */
export function timelinessBps(medianVoteDelayBlocks: number): number {
  if (medianVoteDelayBlocks <= TIMELY_VOTE_BLOCKS) return BPS;
  return Math.floor((BPS * TIMELY_VOTE_BLOCKS) / medianVoteDelayBlocks);
}

/** `part / whole` in basis points, rounded down and capped at the whole; `whenEmpty` when `whole` is 0. */
export function ratioBps(part: number, whole: number, whenEmpty = BPS): number {
  if (whole === 0) return whenEmpty;
  return Math.min(BPS, Math.floor((part * BPS) / whole));
}

/** The lower middle of `values` (integers); 0 for none. */
export function lowerMedian(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

type Tagged =
  | { kind: "delegation"; event: DelegationEvent }
  | { kind: "heartbeat"; event: HeartbeatEvent }
  | { kind: "request"; event: RequestEvent }
  | { kind: "late"; event: LateAnswerEvent }
  | { kind: "challenger"; event: ChallengerEvent };

interface Tally {
  windowsWithBeat: Set<number>;
  asked: Set<bigint>;
  answered: Set<bigint>;
}

/**
 * Every license ever delegated (in `events`), with its figures for `frame`'s epoch, by license id.
 *
 * The chain's state is replayed in event order: a license's operator is the one of its latest delegation
 * event; a license is live at a request when that operator's latest heartbeat is within the liveness window
 * of the request's block time (what `NodeRegistry.isLive` answers there). A heartbeat counts for the
 * licenses its operator held at that moment, so a license cannot borrow uptime from an operator it is
 * delegated to later.
 */
export function epochQos(events: QosEvents, frame: EpochFrame): Map<bigint, LicenseQos> {
  const until = Math.min(frame.now, frame.end);
  const windows = until <= frame.start ? 0 : Math.floor((until - frame.start) / frame.livenessWindow);
  const inEpoch = (timestamp: number) => timestamp >= frame.start && timestamp < frame.end;

  const ordered: Tagged[] = [
    ...events.delegations.map((event) => ({ kind: "delegation" as const, event })),
    ...events.heartbeats.map((event) => ({ kind: "heartbeat" as const, event })),
    ...events.requests.map((event) => ({ kind: "request" as const, event })),
    ...events.lateAnswers.map((event) => ({ kind: "late" as const, event })),
    ...events.challengers.map((event) => ({ kind: "challenger" as const, event })),
  ].sort((a, b) => a.event.block - b.event.block || a.event.logIndex - b.event.logIndex);

  const finalizedIn = new Map(events.finalized.map((event) => [event.jobId, event.block]));
  const challengers = new Set<string>();
  const challenges = new Set<bigint>();
  const operatorOf = new Map<bigint, string>();
  const held = new Map<string, Set<bigint>>();
  const lastBeat = new Map<string, number>();
  const tallies = new Map<bigint, Tally>();
  const tallyOf = (licenseId: bigint) => {
    let tally = tallies.get(licenseId);
    if (tally === undefined) tallies.set(licenseId, (tally = { windowsWithBeat: new Set(), asked: new Set(), answered: new Set() }));
    return tally;
  };
  const licensesOf = (operator: string): Iterable<bigint> => held.get(operator) ?? [];
  const isLiveAt = (licenseId: bigint, timestamp: number) => {
    const operator = operatorOf.get(licenseId);
    const beat = operator === undefined ? undefined : lastBeat.get(operator);
    return beat !== undefined && timestamp <= beat + frame.livenessWindow;
  };

  for (const item of ordered) {
    switch (item.kind) {
      case "delegation": {
        const { licenseId } = item.event;
        tallyOf(licenseId);
        const previous = operatorOf.get(licenseId);
        if (previous !== undefined) held.get(previous)?.delete(licenseId);
        if (item.event.operator === null) {
          operatorOf.delete(licenseId);
          break;
        }
        const operator = item.event.operator.toLowerCase();
        operatorOf.set(licenseId, operator);
        if (!held.has(operator)) held.set(operator, new Set());
        held.get(operator)!.add(licenseId);
        break;
      }
      case "heartbeat": {
        const operator = item.event.operator.toLowerCase();
        lastBeat.set(operator, Math.max(lastBeat.get(operator) ?? 0, item.event.timestamp));
        if (!inEpoch(item.event.timestamp)) break;
        const window = Math.floor((item.event.timestamp - frame.start) / frame.livenessWindow);
        for (const licenseId of licensesOf(operator)) tallyOf(licenseId).windowsWithBeat.add(window);
        break;
      }
      case "challenger": {
        if (item.event.granted) challengers.add(item.event.account.toLowerCase());
        else challengers.delete(item.event.account.toLowerCase());
        break;
      }
      case "request": {
        if (!inEpoch(item.event.timestamp)) break;
        if (challengers.has(item.event.requester.toLowerCase())) challenges.add(item.event.jobId);
        for (const licenseId of operatorOf.keys()) {
          if (isLiveAt(licenseId, item.event.timestamp)) tallyOf(licenseId).asked.add(item.event.jobId);
        }
        break;
      }
      case "late": {
        // Only an answer sent beside the finalizing votes (mined in their block) was in time; one sent
        // after the job was decided (a node resuming from a pause) answers nothing anyone waited for.
        if (finalizedIn.get(item.event.jobId) !== item.event.block) break;
        for (const licenseId of licensesOf(item.event.operator.toLowerCase())) tallyOf(licenseId).answered.add(item.event.jobId);
        break;
      }
    }
  }

  const requestBlock = new Map<bigint, number>();
  for (const request of events.requests) if (inEpoch(request.timestamp)) requestBlock.set(request.jobId, request.block);
  const finalAnswer = new Map(events.finalized.map((event) => [event.jobId, event.resultHash.toLowerCase()]));
  const votesOf = new Map<bigint, VoteEvent[]>();
  for (const vote of events.votes) {
    if (!requestBlock.has(vote.jobId)) continue;
    const list = votesOf.get(vote.licenseId) ?? [];
    list.push(vote);
    votesOf.set(vote.licenseId, list);
  }

  const result = new Map<bigint, LicenseQos>();
  const sortedIds = [...tallies.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const licenseId of sortedIds) {
    const tally = tallies.get(licenseId)!;
    const votes = votesOf.get(licenseId) ?? [];
    let agreed = 0;
    let disagreed = 0;
    for (const vote of votes) {
      tally.answered.add(vote.jobId);
      const final = finalAnswer.get(vote.jobId);
      if (final === undefined) continue;
      if (final === vote.resultHash.toLowerCase()) agreed++;
      else disagreed++;
    }
    const beatWindows = [...tally.windowsWithBeat].filter((window) => window < windows).length;
    const jobsAnswered = [...tally.asked].filter((jobId) => tally.answered.has(jobId)).length;
    const delayOf = (vote: VoteEvent) => vote.block - requestBlock.get(vote.jobId)!;
    const medianVoteDelayBlocks = lowerMedian(votes.map(delayOf));
    const challengeJobsAsked = [...tally.asked].filter((jobId) => challenges.has(jobId));
    const figures = {
      uptimeBps: ratioBps(beatWindows, windows, isLiveAt(licenseId, frame.now) ? BPS : 0),
      participationBps: ratioBps(jobsAnswered, tally.asked.size),
      accuracyBps: ratioBps(agreed, agreed + disagreed),
      timelinessBps: timelinessBps(medianVoteDelayBlocks),
      disagreed,
    };
    result.set(licenseId, {
      licenseId,
      operator: operatorOf.get(licenseId) ?? null,
      live: isLiveAt(licenseId, frame.now),
      windows,
      beatWindows,
      jobsAsked: tally.asked.size,
      jobsAnswered,
      votes: votes.length,
      agreed,
      medianVoteDelayBlocks,
      challengeJobsAsked: challengeJobsAsked.length,
      challengeJobsAnswered: challengeJobsAsked.filter((jobId) => tally.answered.has(jobId)).length,
      challengeMedianVoteDelayBlocks: lowerMedian(votes.filter((vote) => challenges.has(vote.jobId)).map(delayOf)),
      ...figures,
      scoreBps: scoreBps(figures),
    });
  }
  return result;
}

/** The epoch `timestamp` falls in, and its bounds, from the registry's `EPOCHS_START` and `EPOCH_DURATION`. */
export function epochAt(timestamp: number, epochsStart: number, epochDuration: number): { epoch: number; start: number; end: number } {
  const epoch = timestamp < epochsStart ? 0 : Math.floor((timestamp - epochsStart) / epochDuration);
  const start = epochsStart + epoch * epochDuration;
  return { epoch, start, end: start + epochDuration };
}

/** What one node measured of the service in the epoch so far: `IQosReports.Report`. */
export interface QosReport {
  epoch: number;
  apiProbes: number;
  apiCorrect: number;
  apiErrors: number;
  apiLatencyP50Ms: number;
  apiLatencyP95Ms: number;
  evmSourceLatencyP50Ms: number;
  svmSourceLatencyP50Ms: number;
  evmHeadLagSeconds: number;
}

/** `QosReports.QosReported`: a report, by the operator of a live license. */
export interface QosReportEvent extends ChainPosition, QosReport {
  operator: string;
  licenseId: bigint;
}

/** `GET /api/network/status`: the service as the nodes measured it, each figure the median of their reports. */
export interface NetworkStatus {
  epoch: number;
  /** Operators with a report in the epoch (each counted once: its latest report). */
  reporters: number;
  /** Null until a reporter probed the API. */
  api: {
    /** Probes of every reporter, summed. */
    probes: number;
    /** Medians over the reporters that probed: the share of correct answers, of failed ones, and the latencies. */
    correctBps: number;
    errorBps: number;
    latencyP50Ms: number;
    latencyP95Ms: number;
  } | null;
  /** Null until a report; medians over the reporters of their own sources' figures. */
  sources: { evmLatencyP50Ms: number; svmLatencyP50Ms: number; evmHeadLagSeconds: number } | null;
}

/**
 * The network's status in `epoch` from the nodes' reports: each operator's latest report of the epoch,
 * then the median of each figure over those operators, so that no single node's word sets a figure (a
 * minority of lying reporters cannot move a median outside the honest reporters' range).
 */
export function networkStatus(reports: readonly QosReportEvent[], epoch: number): NetworkStatus {
  const latest = new Map<string, QosReportEvent>();
  for (const report of [...reports].sort((a, b) => a.block - b.block || a.logIndex - b.logIndex)) {
    if (report.epoch === epoch) latest.set(report.operator.toLowerCase(), report);
  }
  const all = [...latest.values()];
  const probed = all.filter((report) => report.apiProbes > 0);
  const median = (pick: (report: QosReportEvent) => number, from: readonly QosReportEvent[]) => lowerMedian(from.map(pick));
  return {
    epoch,
    reporters: all.length,
    api:
      probed.length === 0
        ? null
        : {
            probes: probed.reduce((sum, report) => sum + report.apiProbes, 0),
            correctBps: median((report) => ratioBps(report.apiCorrect, report.apiProbes), probed),
            errorBps: median((report) => ratioBps(report.apiErrors, report.apiProbes), probed),
            latencyP50Ms: median((report) => report.apiLatencyP50Ms, probed),
            latencyP95Ms: median((report) => report.apiLatencyP95Ms, probed),
          },
    sources:
      all.length === 0
        ? null
        : {
            evmLatencyP50Ms: median((report) => report.evmSourceLatencyP50Ms, all),
            svmLatencyP50Ms: median((report) => report.svmSourceLatencyP50Ms, all),
            evmHeadLagSeconds: median((report) => report.evmHeadLagSeconds, all),
          },
  };
}
