import { epochQos, type EpochFrame, type QosEvents } from "@avn/protocol/qos";

/** A synthetic network's epoch, sized as `scale` says, and the events a QoS read would replay. */
export interface QosScale {
  licenses: number;
  /** Seconds the epoch has run so far. */
  elapsedSeconds: number;
  heartbeatSeconds: number;
  jobSeconds: number;
  votesPerJob: number;
}

export interface QosFiguresRow {
  scale: QosScale;
  events: number;
  /** Median of the runs: one `epochQos` over the events. */
  computeMs: number;
  heapMegabytes: number;
}

const LIVENESS_WINDOW = 600;

/**
 * Every license its own operator, beating every `heartbeatSeconds`; a job every `jobSeconds`, answered by
 * `votesPerJob` licenses in turn, one block later, and finalized. What `GET /api/network/nodes` replays for
 * the current epoch of a network of that size (the events are built in memory: the replay is measured,
 * not the RPC).
 */
export function syntheticEpoch(scale: QosScale): { events: QosEvents; frame: EpochFrame } {
  const start = 1_000_000;
  const operators = Array.from({ length: scale.licenses }, (_, index) => `0x${(index + 1).toString(16).padStart(40, "0")}`);
  const events: { -readonly [Kind in keyof QosEvents]-?: NonNullable<QosEvents[Kind]>[number][] } = {
    delegations: [],
    heartbeats: [],
    requests: [],
    votes: [],
    lateAnswers: [],
    finalized: [],
    challengers: [],
    commits: [],
    reveals: [],
    attestations: [],
    livenessWindows: [],
  };
  operators.forEach((operator, index) => events.delegations.push({ block: 0, logIndex: index, licenseId: BigInt(index + 1), operator }));
  // One block a second: an event's block is its second since the epoch's start.
  for (let second = 0; second < scale.elapsedSeconds; second += scale.heartbeatSeconds) {
    operators.forEach((operator, index) => events.heartbeats.push({ block: second, logIndex: index, operator, timestamp: start + second }));
  }
  let jobId = 0n;
  for (let second = 1; second < scale.elapsedSeconds; second += scale.jobSeconds) {
    jobId++;
    events.requests.push({ block: second, logIndex: 1_000_000, jobId, requester: "0xc0", timestamp: start + second });
    for (let vote = 0; vote < scale.votesPerJob; vote++) {
      const licenseId = BigInt(((Number(jobId) + vote) % scale.licenses) + 1);
      events.votes.push({ block: second + 1, logIndex: vote, jobId, licenseId, resultHash: "0x01" });
    }
    events.finalized.push({ block: second + 1, logIndex: scale.votesPerJob, jobId, resultHash: "0x01" });
  }
  const frame = { epoch: 0, start, end: start + 7 * 86_400, now: start + scale.elapsedSeconds, livenessWindow: LIVENESS_WINDOW };
  return { events, frame };
}

/** Times `epochQos` over each scale's synthetic epoch (`runs` times, the median kept). */
export function measureQosFigures(scales: readonly QosScale[], runs = 5): QosFiguresRow[] {
  return scales.map((scale) => {
    const { events, frame } = syntheticEpoch(scale);
    const lists: ReadonlyArray<readonly unknown[]> = Object.values(events);
    const count = lists.reduce((sum, list) => sum + list.length, 0);
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      epochQos(events, frame);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return { scale, events: count, computeMs: times[Math.floor(runs / 2)], heapMegabytes: process.memoryUsage().heapUsed / 2 ** 20 };
  });
}
