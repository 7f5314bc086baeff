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

/** A kind of replayed event, and where it sits: the k-way merge below walks the five sorted lists. */
type Replayed =
  | { kind: "delegation"; event: DelegationEvent }
  | { kind: "heartbeat"; event: HeartbeatEvent }
  | { kind: "request"; event: RequestEvent }
  | { kind: "late"; event: LateAnswerEvent }
  | { kind: "challenger"; event: ChallengerEvent };

const byPosition = (a: ChainPosition, b: ChainPosition) => a.block - b.block || a.logIndex - b.logIndex;

/** Walks `lists` (each sorted by position) in position order: a merge, without one array of them all. */
function* inChainOrder(lists: { [Kind in Replayed["kind"]]: readonly Extract<Replayed, { kind: Kind }>["event"][] }): Generator<Replayed> {
  const kinds = Object.keys(lists) as Replayed["kind"][];
  const next = Object.fromEntries(kinds.map((kind) => [kind, 0])) as Record<Replayed["kind"], number>;
  for (;;) {
    let best: Replayed["kind"] | undefined;
    for (const kind of kinds) {
      const candidate = lists[kind][next[kind]];
      if (candidate !== undefined && (best === undefined || byPosition(candidate, lists[best][next[best]]) < 0)) best = kind;
    }
    if (best === undefined) return;
    yield { kind: best, event: lists[best][next[best]++] } as Replayed;
  }
}

/**
 * Every license ever delegated (in `events`), with its figures for `frame`'s epoch, by license id.
 *
 * The chain's state is replayed in event order: a license's operator is the one of its latest delegation
 * event; a license is live at a request when that operator's latest heartbeat is within the liveness window
 * of the request's block time (what `NodeRegistry.isLive` answers there). A heartbeat counts for the
 * licenses its operator held at that moment, so a license cannot borrow uptime from an operator it is
 * delegated to later.
 *
 * Linear in the events but for the jobs, each checked against every delegated license (numbers in arrays,
 * no set per license): `npm run bench:qos` measures it.
 */
export function epochQos(events: QosEvents, frame: EpochFrame): Map<bigint, LicenseQos> {
  const until = Math.min(frame.now, frame.end);
  const windows = until <= frame.start ? 0 : Math.floor((until - frame.start) / frame.livenessWindow);
  const inEpoch = (timestamp: number) => timestamp >= frame.start && timestamp < frame.end;
  const sorted = <T extends ChainPosition>(list: readonly T[]) => [...list].sort(byPosition);

  // Licenses and operators as small numbers, their state in arrays.
  const licenseIds: bigint[] = [];
  const licenseIndex = new Map<bigint, number>();
  const operators: string[] = [];
  const operatorIndex = new Map<string, number>();
  const operatorOf: number[] = []; // license → operator, or -1
  const lastBeat: number[] = []; // operator → latest heartbeat time, or -Infinity
  const held: Set<number>[] = []; // operator → its licenses
  const licenseOf = (licenseId: bigint) => {
    let index = licenseIndex.get(licenseId);
    if (index === undefined) {
      licenseIndex.set(licenseId, (index = licenseIds.length));
      licenseIds.push(licenseId);
      operatorOf.push(-1);
      beatWindows.push(0);
      lastWindow.push(-1);
      asked.push([]);
      askedCount.push(0);
      challengeAskedCount.push(0);
    }
    return index;
  };
  const operatorOfAddress = (address: string) => {
    const key = address.toLowerCase();
    let index = operatorIndex.get(key);
    if (index === undefined) {
      operatorIndex.set(key, (index = operators.length));
      operators.push(key);
      lastBeat.push(-Infinity);
      held.push(new Set());
    }
    return index;
  };
  const isLiveAt = (license: number, timestamp: number) =>
    operatorOf[license] >= 0 && timestamp <= lastBeat[operatorOf[license]] + frame.livenessWindow;

  // Per license: distinct complete windows with a beat; the requests asked of it, as runs of request indices.
  const beatWindows: number[] = [];
  const lastWindow: number[] = [];
  const asked: Array<Array<[first: number, last: number]>> = [];
  const askedCount: number[] = [];
  const challengeAskedCount: number[] = [];
  // Per request of the epoch, by its index: its block and whether it is a challenge.
  const requestIndex = new Map<bigint, number>();
  const requestBlocks: number[] = [];
  const isChallenge: boolean[] = [];
  const challengers = new Set<string>();
  const finalizedIn = new Map(events.finalized.map((event) => [event.jobId, event.block]));
  const answered = new Set<number>(); // request index × licenses + license, counted once
  const lateAnswers: Array<{ license: number; request: number }> = [];

  const replay = inChainOrder({
    delegation: sorted(events.delegations),
    heartbeat: sorted(events.heartbeats),
    request: sorted(events.requests),
    late: sorted(events.lateAnswers),
    challenger: sorted(events.challengers),
  });
  for (const item of replay) {
    switch (item.kind) {
      case "delegation": {
        const license = licenseOf(item.event.licenseId);
        if (operatorOf[license] >= 0) held[operatorOf[license]].delete(license);
        operatorOf[license] = item.event.operator === null ? -1 : operatorOfAddress(item.event.operator);
        if (operatorOf[license] >= 0) held[operatorOf[license]].add(license);
        break;
      }
      case "heartbeat": {
        const operator = operatorOfAddress(item.event.operator);
        lastBeat[operator] = Math.max(lastBeat[operator], item.event.timestamp);
        if (!inEpoch(item.event.timestamp)) break;
        // Chain order is time order: each license's windows come in order, so a new one is a distinct one.
        const window = Math.floor((item.event.timestamp - frame.start) / frame.livenessWindow);
        for (const license of held[operator]) {
          if (window === lastWindow[license]) continue;
          lastWindow[license] = window;
          if (window < windows) beatWindows[license]++;
        }
        break;
      }
      case "challenger": {
        if (item.event.granted) challengers.add(item.event.account.toLowerCase());
        else challengers.delete(item.event.account.toLowerCase());
        break;
      }
      case "request": {
        if (!inEpoch(item.event.timestamp)) break;
        const request = requestBlocks.length;
        requestIndex.set(item.event.jobId, request);
        requestBlocks.push(item.event.block);
        const challenge = challengers.has(item.event.requester.toLowerCase());
        isChallenge.push(challenge);
        for (let license = 0; license < licenseIds.length; license++) {
          if (!isLiveAt(license, item.event.timestamp)) continue;
          const runs = asked[license];
          const last = runs[runs.length - 1];
          if (last !== undefined && last[1] === request - 1) last[1] = request;
          else runs.push([request, request]);
          askedCount[license]++;
          if (challenge) challengeAskedCount[license]++;
        }
        break;
      }
      case "late": {
        // Only an answer sent beside the finalizing votes (mined in their block) was in time; one sent
        // after the job was decided (a node resuming from a pause) answers nothing anyone waited for.
        const request = requestIndex.get(item.event.jobId);
        if (request === undefined || finalizedIn.get(item.event.jobId) !== item.event.block) break;
        for (const license of held[operatorOfAddress(item.event.operator)]) lateAnswers.push({ license, request });
        break;
      }
    }
  }

  const wasAsked = (license: number, request: number) => {
    const runs = asked[license];
    let [low, high] = [0, runs.length - 1];
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (runs[middle][1] < request) low = middle + 1;
      else if (runs[middle][0] > request) high = middle - 1;
      else return true;
    }
    return false;
  };
  const jobsAnswered = licenseIds.map(() => 0);
  const challengeJobsAnswered = licenseIds.map(() => 0);
  const answer = (license: number, request: number) => {
    const key = request * licenseIds.length + license;
    if (answered.has(key) || !wasAsked(license, request)) return;
    answered.add(key);
    jobsAnswered[license]++;
    if (isChallenge[request]) challengeJobsAnswered[license]++;
  };
  for (const { license, request } of lateAnswers) answer(license, request);

  const finalAnswer = new Map(events.finalized.map((event) => [event.jobId, event.resultHash.toLowerCase()]));
  const votes = licenseIds.map(() => ({ count: 0, agreed: 0, disagreed: 0, delays: [] as number[], challengeDelays: [] as number[] }));
  for (const vote of events.votes) {
    const request = requestIndex.get(vote.jobId);
    const license = licenseIndex.get(vote.licenseId);
    if (request === undefined || license === undefined) continue;
    const tally = votes[license];
    tally.count++;
    const delay = vote.block - requestBlocks[request];
    tally.delays.push(delay);
    if (isChallenge[request]) tally.challengeDelays.push(delay);
    answer(license, request);
    const final = finalAnswer.get(vote.jobId);
    if (final === undefined) continue;
    if (final === vote.resultHash.toLowerCase()) tally.agreed++;
    else tally.disagreed++;
  }

  const result = new Map<bigint, LicenseQos>();
  const order = licenseIds.map((_, license) => license).sort((a, b) => (licenseIds[a] < licenseIds[b] ? -1 : 1));
  for (const license of order) {
    const tally = votes[license];
    const medianVoteDelayBlocks = lowerMedian(tally.delays);
    const live = isLiveAt(license, frame.now);
    const figures = {
      uptimeBps: ratioBps(beatWindows[license], windows, live ? BPS : 0),
      participationBps: ratioBps(jobsAnswered[license], askedCount[license]),
      accuracyBps: ratioBps(tally.agreed, tally.agreed + tally.disagreed),
      timelinessBps: timelinessBps(medianVoteDelayBlocks),
      disagreed: tally.disagreed,
    };
    result.set(licenseIds[license], {
      licenseId: licenseIds[license],
      operator: operatorOf[license] >= 0 ? operators[operatorOf[license]] : null,
      live,
      windows,
      beatWindows: beatWindows[license],
      jobsAsked: askedCount[license],
      jobsAnswered: jobsAnswered[license],
      votes: tally.count,
      agreed: tally.agreed,
      medianVoteDelayBlocks,
      challengeJobsAsked: challengeAskedCount[license],
      challengeJobsAnswered: challengeJobsAnswered[license],
      challengeMedianVoteDelayBlocks: lowerMedian(tally.challengeDelays),
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
