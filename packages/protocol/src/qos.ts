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
 * request's log, commit in the next block and reveal in the one after (the vote), with one block of slack.
 */
export const TIMELY_VOTE_BLOCKS = 3;

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
  /** Its transaction's index in the block: a vote cast by `revealResults` shares it with its `ResultsRevealed`. */
  transactionIndex?: number;
}

/** `VerificationRegistry.ResultsCommitted`: an operator's sealed answers. */
export interface CommitEvent extends ChainPosition {
  operator: string;
  commitment: string;
}

/** `VerificationRegistry.ResultsRevealed`: the votes of the same transaction reveal `commitment`. */
export interface RevealEvent extends ChainPosition {
  operator: string;
  commitment: string;
  transactionIndex: number;
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

/**
 * `VerificationRegistry.AttestationRecorded`: an attested answer recorded on-chain, signed by `licenseIds`.
 * It counts for the epoch of `issuedAt`, when the licenses signed it (it is recorded at most an hour later).
 */
export interface AttestationEvent extends ChainPosition {
  issuedAt: number;
  licenseIds: readonly bigint[];
}

/**
 * `NodeRegistry.LivenessWindowUpdated` (its constructor emits the first): the liveness window in force from
 * this position on, read with the other events so that the window at any block since the deployment needs
 * no historical `eth_call`, which an RPC that keeps no archive refuses for a block some days old.
 */
export interface LivenessWindowEvent extends ChainPosition {
  /** Seconds. */
  window: number;
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
  /** Commit–reveal voting (none before the nodes used it). */
  commits?: readonly CommitEvent[];
  reveals?: readonly RevealEvent[];
  /** Attested answers recorded on-chain (none before the registry named their signers). */
  attestations?: readonly AttestationEvent[];
  /** Changes of the liveness window: not replayed (a frame names its window), kept for `livenessWindowAt`. */
  livenessWindows?: readonly LivenessWindowEvent[];
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
  /**
   * Of the agreeing votes, those revealed from a commitment made before the job's first revealed answer
   * equal to the quorum's: the license's own answers, not copies. What epoch rewards pay (`rewardWeight`).
   */
  points: number;
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
  /**
   * Attested answers issued in the epoch and recorded on-chain with a signature of the license: published,
   * not scored nor paid (docs/verification.md says why).
   */
  attestations: number;
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

/** A replayed event, tagged with its kind. */
type Replayed =
  | { kind: "delegation"; event: DelegationEvent }
  | { kind: "heartbeat"; event: HeartbeatEvent }
  | { kind: "request"; event: RequestEvent }
  | { kind: "vote"; event: VoteEvent }
  | { kind: "late"; event: LateAnswerEvent }
  | { kind: "finalized"; event: FinalizedEvent }
  | { kind: "challenger"; event: ChallengerEvent }
  | { kind: "commit"; event: CommitEvent }
  | { kind: "reveal"; event: RevealEvent }
  | { kind: "attestation"; event: AttestationEvent };

type ReplayedLists = { [Kind in Replayed["kind"]]: readonly Extract<Replayed, { kind: Kind }>["event"][] };

const byPosition = (a: ChainPosition, b: ChainPosition) => a.block - b.block || a.logIndex - b.logIndex;

/** Walks `lists` (each sorted by position) in position order: a merge, without one array of them all. */
function* inChainOrder(lists: ReplayedLists): Generator<Replayed> {
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

/** The epoch a replay counts for; `now` is given when the figures are read. */
export type ReplayFrame = Omit<EpochFrame, "now">;

/**
 * The chain's state replayed in event order, and each license's tallies for one epoch: what `epochQos`
 * computes, kept between reads so that a reader can apply only the events it has not applied yet (each
 * new range of blocks) instead of replaying the epoch again.
 *
 * The rules: a license's operator is the one of its latest delegation event; a license is live at a
 * request when that operator's latest heartbeat is within the liveness window of the request's block time
 * (what `NodeRegistry.isLive` answers there). A heartbeat counts for the licenses its operator held at
 * that moment, so a license cannot borrow uptime from an operator it is delegated to later. Licenses and
 * operators are small numbers in arrays, and each license's asked jobs runs of request indices: every job
 * is checked against every delegated license, and nothing else grows with licenses × jobs.
 */
export class QosReplay {
  readonly frame: ReplayFrame;
  readonly #licenseIds: bigint[] = [];
  readonly #licenseIndex = new Map<bigint, number>();
  readonly #operators: string[] = [];
  readonly #operatorIndex = new Map<string, number>();
  readonly #operatorOf: number[] = []; // license → operator, or -1
  readonly #lastBeat: number[] = []; // operator → latest heartbeat time
  readonly #held: Set<number>[] = []; // operator → its licenses
  readonly #challengers = new Set<string>();
  // Per license, in this epoch: distinct windows with a beat (the latest may be incomplete), asked jobs.
  readonly #windowsWithBeat: number[] = [];
  readonly #lastWindow: number[] = [];
  readonly #asked: Array<Array<[first: number, last: number]>> = [];
  readonly #askedCount: number[] = [];
  readonly #challengeAsked: number[] = [];
  readonly #answeredCount: number[] = [];
  readonly #challengeAnswered: number[] = [];
  readonly #attestations: number[] = [];
  readonly #votes: Array<{
    count: number;
    agreed: number;
    points: number;
    disagreed: number;
    delays: number[];
    challengeDelays: number[];
  }> = [];
  // Commit–reveal: the block of each operator's first commitment of a value, and the reveals of the latest
  // block that had one (by transaction index: the commitment's block, or null when nothing was committed).
  readonly #commitBlocks = new Map<string, number>();
  #revealBlock = -1;
  readonly #revealsInBlock = new Map<number, number | null>();
  // Per job of the epoch, by its request index.
  readonly #requestIndex = new Map<bigint, number>();
  readonly #requestBlocks: number[] = [];
  readonly #isChallenge: boolean[] = [];
  readonly #answered = new Set<number>(); // (license, request) pairs answered, counted once
  // Until finalized: each vote, its block, and its commitment's block (undefined: not revealed; null: revealed, never committed).
  readonly #pendingVotes = new Map<
    number,
    Array<{ license: number; resultHash: string; block: number; commitBlock: number | null | undefined }>
  >();
  readonly #finalizedIn = new Map<number, number>(); // request → block

  constructor(frame: ReplayFrame) {
    this.frame = frame;
  }

  /** Applies `events`, which must all come after the events applied before (in chain order). */
  apply(events: QosEvents): this {
    const sorted = <T extends ChainPosition>(list: readonly T[]) => [...list].sort(byPosition);
    const replay = inChainOrder({
      delegation: sorted(events.delegations),
      heartbeat: sorted(events.heartbeats),
      request: sorted(events.requests),
      vote: sorted(events.votes),
      late: sorted(events.lateAnswers),
      finalized: sorted(events.finalized),
      challenger: sorted(events.challengers),
      commit: sorted(events.commits ?? []),
      reveal: sorted(events.reveals ?? []),
      attestation: sorted(events.attestations ?? []),
    });
    for (const item of replay) this.#applyOne(item);
    return this;
  }

  /** Every license ever delegated (in the events applied), with its figures at `now`, by license id. */
  figures(now: number): Map<bigint, LicenseQos> {
    const { start, end, livenessWindow } = this.frame;
    const until = Math.min(now, end);
    const windows = until <= start ? 0 : Math.floor((until - start) / livenessWindow);
    const result = new Map<bigint, LicenseQos>();
    const licenseIds = this.#licenseIds;
    const order = licenseIds.map((_, license) => license).sort((a, b) => (licenseIds[a] < licenseIds[b] ? -1 : 1));
    for (const license of order) {
      const tally = this.#votes[license];
      const medianVoteDelayBlocks = lowerMedian(tally.delays);
      const live = this.#isLiveAt(license, now);
      // Windows complete in order: only the latest one with a beat can still be running.
      const beatWindows = this.#windowsWithBeat[license] - (this.#lastWindow[license] >= windows ? 1 : 0);
      const figures = {
        uptimeBps: ratioBps(beatWindows, windows, live ? BPS : 0),
        participationBps: ratioBps(this.#answeredCount[license], this.#askedCount[license]),
        accuracyBps: ratioBps(tally.agreed, tally.agreed + tally.disagreed),
        timelinessBps: timelinessBps(medianVoteDelayBlocks),
        disagreed: tally.disagreed,
      };
      const operator = this.#operatorOf[license];
      result.set(licenseIds[license], {
        licenseId: licenseIds[license],
        operator: operator >= 0 ? this.#operators[operator] : null,
        live,
        windows,
        beatWindows,
        jobsAsked: this.#askedCount[license],
        jobsAnswered: this.#answeredCount[license],
        votes: tally.count,
        agreed: tally.agreed,
        points: tally.points,
        medianVoteDelayBlocks,
        challengeJobsAsked: this.#challengeAsked[license],
        challengeJobsAnswered: this.#challengeAnswered[license],
        challengeMedianVoteDelayBlocks: lowerMedian(tally.challengeDelays),
        attestations: this.#attestations[license],
        ...figures,
        scoreBps: scoreBps(figures),
      });
    }
    return result;
  }

  #applyOne(item: Replayed): void {
    const { start, end, livenessWindow } = this.frame;
    const inEpoch = (timestamp: number) => timestamp >= start && timestamp < end;
    switch (item.kind) {
      case "delegation": {
        const license = this.#licenseOf(item.event.licenseId);
        if (this.#operatorOf[license] >= 0) this.#held[this.#operatorOf[license]].delete(license);
        this.#operatorOf[license] = item.event.operator === null ? -1 : this.#operatorOfAddress(item.event.operator);
        if (this.#operatorOf[license] >= 0) this.#held[this.#operatorOf[license]].add(license);
        return;
      }
      case "heartbeat": {
        const operator = this.#operatorOfAddress(item.event.operator);
        this.#lastBeat[operator] = Math.max(this.#lastBeat[operator], item.event.timestamp);
        if (!inEpoch(item.event.timestamp)) return;
        // Chain order is time order: each license's windows come in order, so a new one is a distinct one.
        const window = Math.floor((item.event.timestamp - start) / livenessWindow);
        for (const license of this.#held[operator]) {
          if (window === this.#lastWindow[license]) continue;
          this.#lastWindow[license] = window;
          this.#windowsWithBeat[license]++;
        }
        return;
      }
      case "challenger": {
        if (item.event.granted) this.#challengers.add(item.event.account.toLowerCase());
        else this.#challengers.delete(item.event.account.toLowerCase());
        return;
      }
      case "request": {
        if (!inEpoch(item.event.timestamp)) return;
        const request = this.#requestBlocks.length;
        this.#requestIndex.set(item.event.jobId, request);
        this.#requestBlocks.push(item.event.block);
        const challenge = this.#challengers.has(item.event.requester.toLowerCase());
        this.#isChallenge.push(challenge);
        for (let license = 0; license < this.#licenseIds.length; license++) {
          if (!this.#isLiveAt(license, item.event.timestamp)) continue;
          const runs = this.#asked[license];
          const last = runs[runs.length - 1];
          if (last !== undefined && last[1] === request - 1) last[1] = request;
          else runs.push([request, request]);
          this.#askedCount[license]++;
          if (challenge) this.#challengeAsked[license]++;
        }
        return;
      }
      case "vote": {
        const request = this.#requestIndex.get(item.event.jobId);
        const license = this.#licenseIndex.get(item.event.licenseId);
        if (request === undefined || license === undefined) return;
        const tally = this.#votes[license];
        tally.count++;
        const delay = item.event.block - this.#requestBlocks[request];
        tally.delays.push(delay);
        if (this.#isChallenge[request]) tally.challengeDelays.push(delay);
        this.#answer(license, request);
        const { block, transactionIndex } = item.event;
        const commitBlock =
          block === this.#revealBlock && transactionIndex !== undefined ? this.#revealsInBlock.get(transactionIndex) : undefined;
        const pending = this.#pendingVotes.get(request) ?? [];
        pending.push({ license, resultHash: item.event.resultHash.toLowerCase(), block, commitBlock });
        this.#pendingVotes.set(request, pending);
        return;
      }
      case "commit": {
        const key = `${item.event.operator.toLowerCase()}:${item.event.commitment.toLowerCase()}`;
        if (!this.#commitBlocks.has(key)) this.#commitBlocks.set(key, item.event.block);
        return;
      }
      case "reveal": {
        if (item.event.block !== this.#revealBlock) {
          this.#revealBlock = item.event.block;
          this.#revealsInBlock.clear();
        }
        // A commitment counts only from an earlier block: one in the reveal's own block hid nothing.
        const committed = this.#commitBlocks.get(`${item.event.operator.toLowerCase()}:${item.event.commitment.toLowerCase()}`);
        this.#revealsInBlock.set(item.event.transactionIndex, committed !== undefined && committed < item.event.block ? committed : null);
        return;
      }
      case "finalized": {
        const request = this.#requestIndex.get(item.event.jobId);
        if (request === undefined) return;
        this.#finalizedIn.set(request, item.event.block);
        const final = item.event.resultHash.toLowerCase();
        const votes = this.#pendingVotes.get(request) ?? [];
        // The quorum's answer became public with its first revealed vote: a commitment made before that block
        // was made without it; one made in it or after could be a copy.
        const revealedAt = votes.filter((vote) => vote.resultHash === final && vote.commitBlock !== undefined).map((vote) => vote.block);
        const firstReveal = revealedAt.length === 0 ? -1 : Math.min(...revealedAt);
        for (const { license, resultHash, commitBlock } of votes) {
          if (resultHash !== final) {
            this.#votes[license].disagreed++;
            continue;
          }
          this.#votes[license].agreed++;
          if (commitBlock !== undefined && commitBlock !== null && commitBlock < firstReveal) this.#votes[license].points++;
        }
        this.#pendingVotes.delete(request);
        return;
      }
      case "attestation": {
        if (!inEpoch(item.event.issuedAt)) return;
        // A signing license was delegated and live when recorded: one the events read know nothing of (delegated
        // before the first block read) is left out, as its votes are, rather than listed without an operator.
        for (const licenseId of item.event.licenseIds) {
          const license = this.#licenseIndex.get(licenseId);
          if (license !== undefined) this.#attestations[license]++;
        }
        return;
      }
      case "late": {
        // Only an answer sent beside the finalizing votes (mined in their block) was in time; one sent
        // after the job was decided (a node resuming from a pause) answers nothing anyone waited for.
        const request = this.#requestIndex.get(item.event.jobId);
        if (request === undefined || this.#finalizedIn.get(request) !== item.event.block) return;
        for (const license of this.#held[this.#operatorOfAddress(item.event.operator)]) this.#answer(license, request);
        return;
      }
    }
  }

  #answer(license: number, request: number): void {
    // Exact below 2^53: licenses are capped at 50,000 by NodeLicense, and an epoch's jobs below 2^32.
    const key = license * 4_294_967_296 + request;
    if (this.#answered.has(key) || !this.#wasAsked(license, request)) return;
    this.#answered.add(key);
    this.#answeredCount[license]++;
    if (this.#isChallenge[request]) this.#challengeAnswered[license]++;
  }

  #wasAsked(license: number, request: number): boolean {
    const runs = this.#asked[license];
    let [low, high] = [0, runs.length - 1];
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (runs[middle][1] < request) low = middle + 1;
      else if (runs[middle][0] > request) high = middle - 1;
      else return true;
    }
    return false;
  }

  #isLiveAt(license: number, timestamp: number): boolean {
    const operator = this.#operatorOf[license];
    return operator >= 0 && timestamp <= this.#lastBeat[operator] + this.frame.livenessWindow;
  }

  #licenseOf(licenseId: bigint): number {
    let index = this.#licenseIndex.get(licenseId);
    if (index === undefined) {
      this.#licenseIndex.set(licenseId, (index = this.#licenseIds.length));
      this.#licenseIds.push(licenseId);
      this.#operatorOf.push(-1);
      this.#windowsWithBeat.push(0);
      this.#lastWindow.push(-1);
      this.#asked.push([]);
      this.#askedCount.push(0);
      this.#challengeAsked.push(0);
      this.#answeredCount.push(0);
      this.#challengeAnswered.push(0);
      this.#attestations.push(0);
      this.#votes.push({ count: 0, agreed: 0, points: 0, disagreed: 0, delays: [], challengeDelays: [] });
    }
    return index;
  }

  #operatorOfAddress(address: string): number {
    const key = address.toLowerCase();
    let index = this.#operatorIndex.get(key);
    if (index === undefined) {
      this.#operatorIndex.set(key, (index = this.#operators.length));
      this.#operators.push(key);
      this.#lastBeat.push(-Infinity);
      this.#held.push(new Set());
    }
    return index;
  }
}

/**
 * Every license ever delegated (in `events`), with its figures for `frame`'s epoch, by license id: the
 * events replayed at once (`QosReplay` for the rules; `npm run bench:qos` measures it).
 */
export function epochQos(events: QosEvents, frame: EpochFrame): Map<bigint, LicenseQos> {
  const { now, ...replayFrame } = frame;
  return new QosReplay(replayFrame).apply(events).figures(now);
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
  /** The hub's rounds the node counted: those whose winning struct it signed itself. */
  peerRounds: number;
  /** What it saw of each peer license in those rounds, ascending by license id. */
  peers: readonly PeerObservation[];
}

/** `IQosReports.PeerObservation`: one peer license as a node saw it sign in the hub's rounds. */
export interface PeerObservation {
  licenseId: bigint;
  /** Rounds the node counted since the license's first verified signature of the epoch. */
  roundsObserved: number;
  /** Of those, rounds with the license's signature of the node's own struct. */
  roundsSigned: number;
  /** The median of the hub's times from request to those signatures. */
  medianSigningMs: number;
}

/** The fewest reporters (operators other than a license's own) behind a published peer figure. */
export const MIN_PEER_REPORTERS = 2;

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
  /** Each peer license some other operator's report observed, ascending; empty before the first such report. */
  peers: PeerStatus[];
}

/** One license as the other operators saw it sign in the hub's rounds: medians over their reports. */
export interface PeerStatus {
  licenseId: number;
  /** Operators whose latest report of the epoch observed the license, its own operator left out. */
  reporters: number;
  /** The median of their observed rounds. */
  roundsObserved: number;
  /** The median of their signed shares; null below MIN_PEER_REPORTERS reporters. */
  signedBps: number | null;
  /** The median of their median signing times; null below MIN_PEER_REPORTERS, or when none saw it sign. */
  medianSigningMs: number | null;
}

/**
 * Who operated each license at a chain position, from the delegation events: what a report about a peer is
 * checked against (a license's own operator is no witness of it).
 */
export function operatorLookup(delegations: readonly DelegationEvent[]): (licenseId: bigint, at: ChainPosition) => string | null {
  const byLicense = new Map<bigint, DelegationEvent[]>();
  for (const event of delegations) {
    const list = byLicense.get(event.licenseId) ?? [];
    list.push(event);
    byLicense.set(event.licenseId, list);
  }
  for (const list of byLicense.values()) list.sort(compareChainPositions);
  return (licenseId, at) => {
    const list = byLicense.get(licenseId);
    if (list === undefined) return null;
    // The last event at or before `at`: a binary search, since a report is looked up once per peer it lists.
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compareChainPositions(list[middle], at) <= 0) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? null : (list[low - 1].operator?.toLowerCase() ?? null);
  };
}

function compareChainPositions(a: ChainPosition, b: ChainPosition): number {
  return a.block - b.block || a.logIndex - b.logIndex;
}

/**
 * The network's status in `epoch` from the nodes' reports: each operator's latest report of the epoch,
 * then the median of each figure over those operators, so that no single node's word sets a figure (a
 * minority of lying reporters cannot move a median outside the honest reporters' range).
 */
export function networkStatus(
  reports: readonly QosReportEvent[],
  epoch: number,
  delegations: readonly DelegationEvent[] = [],
): NetworkStatus {
  const latest = new Map<string, QosReportEvent>();
  for (const report of [...reports].sort(compareChainPositions)) {
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
    peers: peerStatus(all, operatorLookup(delegations)),
  };
}

/**
 * Per peer license, the medians over the reports that observed it, leaving out its own operator's (at the
 * report's block) and the report made in its own name: a node's word about itself is no witness.
 */
function peerStatus(reports: readonly QosReportEvent[], operatorAt: ReturnType<typeof operatorLookup>): PeerStatus[] {
  const byLicense = new Map<bigint, PeerObservation[]>();
  for (const report of reports) {
    for (const peer of report.peers) {
      if (peer.roundsObserved === 0 || peer.licenseId === report.licenseId) continue;
      if (operatorAt(peer.licenseId, report) === report.operator.toLowerCase()) continue;
      const list = byLicense.get(peer.licenseId) ?? [];
      list.push(peer);
      byLicense.set(peer.licenseId, list);
    }
  }
  return [...byLicense.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([licenseId, observed]) => {
      const enough = observed.length >= MIN_PEER_REPORTERS;
      const signing = observed.filter((peer) => peer.roundsSigned > 0);
      return {
        licenseId: Number(licenseId),
        reporters: observed.length,
        roundsObserved: lowerMedian(observed.map((peer) => peer.roundsObserved)),
        signedBps: enough ? lowerMedian(observed.map((peer) => ratioBps(peer.roundsSigned, peer.roundsObserved))) : null,
        medianSigningMs: enough && signing.length > 0 ? lowerMedian(signing.map((peer) => peer.medianSigningMs)) : null,
      };
    });
}
