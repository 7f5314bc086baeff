import { expect } from "chai";

import { id } from "ethers";

import {
  CHALLENGER_ROLE,
  epochQos,
  networkStatus,
  operatorLookup,
  QosReplay,
  scoreBps,
  timelinessBps,
  type EpochFrame,
  type QosEvents,
  type QosReportEvent,
} from "@avn/protocol/qos";
import { decodeQosLogs, QOS_EVENTS, qosEventsOf } from "@avn/protocol/qos-logs";
import { encodeAbiParameters, pad, parseAbiParameters, toEventSelector } from "viem";

import { syntheticEpoch } from "../../../src/bench/qos-figures.ts";

const A = "0x00000000000000000000000000000000000000aa";
const B = "0x00000000000000000000000000000000000000bb";
const W = 100;
const FRAME: EpochFrame = { epoch: 3, start: 1_000, end: 2_000, now: 1_500, livenessWindow: W };
const none: QosEvents = { delegations: [], heartbeats: [], requests: [], votes: [], lateAnswers: [], finalized: [], challengers: [] };
const CONSUMER = "0x00000000000000000000000000000000000000cc";

/** Block `n` at time `1_000 + n` (one block a second from the epoch's start). */
const at = (block: number, logIndex = 0) => ({ block, logIndex });

describe("QoS figures and score (@avn/protocol/qos)", function () {
  it("scores 0 from two wrong answers, counts uptime of 95% as whole, and pays timeliness past three blocks less", function () {
    const perfect = { uptimeBps: 10_000, participationBps: 10_000, accuracyBps: 10_000, timelinessBps: 10_000, disagreed: 0 };
    expect(scoreBps(perfect)).to.equal(10_000);
    expect(scoreBps({ ...perfect, disagreed: 1, accuracyBps: 9_000 })).to.equal(9_000);
    expect(scoreBps({ ...perfect, disagreed: 2, accuracyBps: 9_999 })).to.equal(0);
    expect(scoreBps({ ...perfect, uptimeBps: 9_500 })).to.equal(10_000);
    expect(scoreBps({ ...perfect, uptimeBps: 9_499 })).to.equal(9_499);
    expect([1, 2, 3, 4, 20].map(timelinessBps)).to.deep.equal([10_000, 10_000, 10_000, 7_500, 1_500]);
  });

  it("gives points only to agreeing votes revealed from a commitment made before the answer was first revealed", function () {
    const D = "0x00000000000000000000000000000000000000dd";
    // Four operators, one license each, all live; one job (request in block 10), answer 0x01.
    const operators = [A, B, CONSUMER, D];
    const vote = (block: number, logIndex: number, licenseId: bigint, transactionIndex: number, resultHash = "0x01") => ({
      ...at(block, logIndex),
      jobId: 1n,
      licenseId,
      resultHash,
      transactionIndex,
    });
    const reveal = (block: number, logIndex: number, operator: string, commitment: string, transactionIndex: number) => ({
      ...at(block, logIndex),
      operator,
      commitment,
      transactionIndex,
    });
    const events: QosEvents = {
      ...none,
      delegations: operators.map((operator, index) => ({ ...at(1, index), licenseId: BigInt(index + 1), operator })),
      heartbeats: operators.map((operator, index) => ({ ...at(5, index), operator, timestamp: 1_005 })),
      requests: [{ ...at(10), jobId: 1n, requester: CONSUMER, timestamp: 1_010 }],
      commits: [
        { ...at(11, 0), operator: A, commitment: "0xa1" }, // A commits in block 11 ...
        { ...at(11, 1), operator: B, commitment: "0xb1" }, // ... and B too
        { ...at(12, 0), operator: D, commitment: "0xd1" }, // D commits only once A's answer is out (block 12): a copy
        { ...at(12, 1), operator: CONSUMER, commitment: "0xa1" }, // another operator's commitment is not its own
      ],
      reveals: [
        reveal(12, 2, A, "0xa1", 5), // the first revealed answer equal to the quorum's: block 12
        reveal(13, 0, B, "0xb1", 0),
        reveal(13, 2, CONSUMER, "0xa1", 1),
        reveal(14, 0, D, "0xd1", 0),
      ],
      votes: [vote(12, 3, 1n, 5), vote(13, 1, 2n, 0), vote(13, 3, 3n, 1), vote(14, 1, 4n, 0)],
      finalized: [{ ...at(14, 2), jobId: 1n, resultHash: "0x01" }],
    };
    const points = (figures: Map<bigint, { agreed: number; points: number }>) =>
      [...figures.values()].map((license) => [license.agreed, license.points]);
    // A and B: their own answers. The consumer's operator: a reveal of A's commitment is not its commitment.
    // D: committed in the block the answer was revealed: no point. All four agreed.
    expect(points(epochQos(events, FRAME))).to.deep.equal([
      [1, 1],
      [1, 1],
      [1, 0],
      [1, 0],
    ]);
    // Applied block by block, as the API's index applies each range it reads, with a recorded attestation and
    // a change of the liveness window among them: the same figures as at once.
    const more: QosEvents = {
      ...events,
      attestations: [{ ...at(13, 4), issuedAt: 1_012, licenseIds: [1n, 2n] }],
      livenessWindows: [{ ...at(0), window: W }],
    };
    const inBlock = (block: number) =>
      Object.fromEntries(
        Object.entries(more).map(([kind, list]) => [kind, (list as Array<{ block: number }>).filter((event) => event.block === block)]),
      ) as unknown as QosEvents;
    const { now, ...replayFrame } = FRAME;
    const replay = new QosReplay(replayFrame);
    for (let block = 0; block <= 14; block++) replay.apply(inBlock(block));
    const whole = epochQos(more, FRAME);
    expect([...replay.figures(now).values()]).to.deep.equal([...whole.values()]);
    expect([...whole.values()].map((license) => license.attestations)).to.deep.equal([1, 1, 0, 0]);
    // A wrong answer revealed first does not make the others late: only the quorum's answer counts.
    const wrongFirst: QosEvents = {
      ...events,
      commits: [...events.commits!, { ...at(10, 1), operator: D, commitment: "0xd0" }],
      reveals: [reveal(11, 5, D, "0xd0", 3), ...events.reveals!.filter((entry) => entry.operator !== D)],
      votes: [vote(11, 6, 4n, 3, "0x09"), ...events.votes.filter((entry) => entry.licenseId !== 4n)],
    };
    expect(points(epochQos(wrongFirst, FRAME))).to.deep.equal([
      [1, 1],
      [1, 1],
      [1, 0],
      [0, 0],
    ]);
    // A plain vote (no reveal) never earns a point, and a reveal in its commitment's own block hid nothing.
    const plain: QosEvents = {
      ...events,
      commits: [{ ...at(12, 0), operator: A, commitment: "0xa1" }],
      reveals: [reveal(12, 2, A, "0xa1", 5)],
      votes: [vote(12, 3, 1n, 5), { ...at(13, 1), jobId: 1n, licenseId: 2n, resultHash: "0x01" }],
      finalized: [{ ...at(13, 2), jobId: 1n, resultHash: "0x01" }],
    };
    expect(points(epochQos(plain, FRAME)).slice(0, 2)).to.deep.equal([
      [1, 0],
      [1, 0],
    ]);
  });

  it("credits a heartbeat only to the licenses its operator held then, and an answer beside the finalizing votes as an answer", function () {
    const events: QosEvents = {
      ...none,
      delegations: [
        { ...at(1), licenseId: 1n, operator: A },
        { ...at(1, 1), licenseId: 3n, operator: A },
        // License 2 moves from B to A in the epoch's third window: B's earlier beats stay B's.
        { ...at(2), licenseId: 2n, operator: B },
        { ...at(250), licenseId: 2n, operator: A },
      ],
      heartbeats: [10, 110, 210, 310, 410].flatMap((t) => [
        { ...at(t, 1), operator: A, timestamp: 1_000 + t },
        ...(t < 200 ? [{ ...at(t, 2), operator: B, timestamp: 1_000 + t }] : []),
      ]),
      requests: [
        { ...at(20), jobId: 1n, requester: CONSUMER, timestamp: 1_020 },
        { ...at(320), jobId: 2n, requester: CONSUMER, timestamp: 1_320 },
      ],
      votes: [
        { ...at(21), jobId: 1n, licenseId: 1n, resultHash: "0x01" },
        { ...at(22), jobId: 1n, licenseId: 3n, resultHash: "0x01" },
        { ...at(321), jobId: 2n, licenseId: 1n, resultHash: "0x02" },
      ],
      // A answered job 2 for license 2 in the block the quorum finalized it: in time, just not first. B's
      // answer to job 1 came a block after its finalization: it counts for nothing.
      lateAnswers: [
        { ...at(321, 2), jobId: 2n, operator: A },
        { ...at(23), jobId: 1n, operator: B },
      ],
      finalized: [
        { ...at(22, 1), jobId: 1n, resultHash: "0x01" },
        { ...at(321, 1), jobId: 2n, resultHash: "0x02" },
      ],
    };
    const figures = epochQos(events, FRAME);
    expect(figures.get(1n)).to.include({ windows: 5, beatWindows: 5, uptimeBps: 10_000, jobsAsked: 2, jobsAnswered: 2, agreed: 2 });
    // License 2: B's beats in windows 0 and 1, then A's after the move (310 and 410: windows 3 and 4). A's
    // beat at 210 came before the move (block 210 < 250): window 2 is missing. 4 of 5.
    expect(figures.get(2n)).to.include({
      beatWindows: 4,
      uptimeBps: 8_000,
      jobsAsked: 2,
      jobsAnswered: 1,
      votes: 0,
      participationBps: 5_000,
    });
    expect(figures.get(2n)?.operator).to.equal(A);
  });

  it("does not ask a job of a license whose operator is past the liveness window, and counts no window before the first ends", function () {
    const events: QosEvents = {
      ...none,
      delegations: [{ ...at(1), licenseId: 1n, operator: A }],
      heartbeats: [{ ...at(5), operator: A, timestamp: 1_005 }],
      requests: [
        { ...at(100), jobId: 1n, requester: CONSUMER, timestamp: 1_105 }, // exactly one window after the beat: still live
        { ...at(101), jobId: 2n, requester: CONSUMER, timestamp: 1_106 }, // one second later: not live
      ],
    };
    expect(epochQos(events, FRAME).get(1n)).to.include({ jobsAsked: 1, participationBps: 0, beatWindows: 1, windows: 5, uptimeBps: 2_000 });
    const early = epochQos(events, { ...FRAME, now: 1_050 }).get(1n)!;
    expect(early).to.include({ windows: 0, uptimeBps: 10_000, live: true });
    expect(epochQos(events, { ...FRAME, now: 1_200 }).get(1n)).to.include({ windows: 2, live: false, uptimeBps: 5_000 });
  });

  it("counts each license's recorded attestations by the epoch they were issued in, and leaves the score alone", function () {
    const events: QosEvents = {
      ...none,
      delegations: [
        { ...at(1), licenseId: 1n, operator: A },
        { ...at(1, 1), licenseId: 2n, operator: B },
      ],
      heartbeats: [
        { ...at(5), operator: A, timestamp: 1_005 },
        { ...at(5, 1), operator: B, timestamp: 1_005 },
      ],
      attestations: [
        { ...at(10), issuedAt: 999, licenseIds: [1n, 2n] }, // issued the epoch before, recorded in this one: not counted
        { ...at(11), issuedAt: 1_010, licenseIds: [1n, 2n] },
        { ...at(12), issuedAt: 1_020, licenseIds: [1n] },
        { ...at(13), issuedAt: 2_000, licenseIds: [2n] }, // the next epoch's
      ],
    };
    const figures = epochQos(events, { ...FRAME, now: 1_050 });
    expect(figures.get(1n)).to.include({ attestations: 2, scoreBps: 10_000 });
    expect(figures.get(2n)).to.include({ attestations: 1, scoreBps: 10_000 });
    // The registry's event, encoded here as the contract emits it (test/ts/api/NetworkNodes.ts reads a real
    // one), decoded as the API and the web app read it.
    const registry = "0x00000000000000000000000000000000000000dd";
    const data = encodeAbiParameters(parseAbiParameters("uint8, bytes32, bytes32, uint256, bytes32, uint64, uint64, uint256, uint256[]"), [
      0,
      pad("0x01"),
      pad("0x02"),
      5n,
      pad("0x03"),
      7n,
      1_010n,
      10n,
      [1n, 2n],
    ]);
    const logs = [
      {
        address: registry,
        topics: [toEventSelector(QOS_EVENTS.find((event) => event.name === "AttestationRecorded")!), pad(CONSUMER)],
        data,
        blockNumber: 11n,
        logIndex: 0,
        transactionIndex: 0,
        blockHash: pad("0x0b"),
        transactionHash: pad("0x0c"),
        removed: false,
      },
    ];
    expect(qosEventsOf(decodeQosLogs(logs as never), new Map(), registry).attestations).to.deep.equal([
      { block: 11, logIndex: 0, issuedAt: 1_010, licenseIds: [1n, 2n] },
    ]);
  });

  it("counts a job as a challenge while its requester holds CHALLENGER_ROLE, and measures each license's answers to them", function () {
    expect(CHALLENGER_ROLE).to.equal(id("CHALLENGER_ROLE"));
    const CHALLENGER = "0x00000000000000000000000000000000000000ee";
    const events: QosEvents = {
      ...none,
      delegations: [{ ...at(1), licenseId: 1n, operator: A }],
      heartbeats: [{ ...at(2), operator: A, timestamp: 1_002 }],
      challengers: [
        { ...at(3), account: CHALLENGER, granted: true },
        { ...at(40), account: CHALLENGER, granted: false },
      ],
      requests: [
        { ...at(10), jobId: 1n, requester: CHALLENGER, timestamp: 1_010 },
        { ...at(10, 1), jobId: 2n, requester: CHALLENGER, timestamp: 1_010 },
        { ...at(11), jobId: 3n, requester: CONSUMER, timestamp: 1_011 },
        // After the role was revoked: an ordinary job.
        { ...at(50), jobId: 4n, requester: CHALLENGER, timestamp: 1_050 },
      ],
      votes: [
        { ...at(13), jobId: 1n, licenseId: 1n, resultHash: "0x01" },
        { ...at(12), jobId: 3n, licenseId: 1n, resultHash: "0x03" },
        { ...at(51), jobId: 4n, licenseId: 1n, resultHash: "0x04" },
      ],
    };
    expect(epochQos(events, FRAME).get(1n)).to.include({
      jobsAsked: 4,
      jobsAnswered: 3,
      challengeJobsAsked: 2,
      challengeJobsAnswered: 1,
      challengeMedianVoteDelayBlocks: 3,
      medianVoteDelayBlocks: 1,
    });
  });

  it("gives the same figures whether the events are applied at once or range by range, in chain order", function () {
    const { events, frame } = syntheticEpoch({
      licenses: 7,
      elapsedSeconds: 3 * 3_600,
      heartbeatSeconds: 60,
      jobSeconds: 13,
      votesPerJob: 3,
    });
    const { now, ...replayFrame } = frame;
    const whole = epochQos(events, frame);
    // Cut the chain into ranges of 500 blocks, as the API reads it, and apply each range's events in turn.
    const replay = new QosReplay(replayFrame);
    const last = Math.max(...events.heartbeats.map((event) => event.block), ...events.votes.map((event) => event.block));
    for (let from = 0; from <= last; from += 500) {
      const inRange = <T extends { block: number }>(list: readonly T[]) =>
        list.filter((event) => event.block >= from && event.block < from + 500);
      replay.apply({
        delegations: inRange(events.delegations),
        heartbeats: inRange(events.heartbeats),
        requests: inRange(events.requests),
        votes: inRange(events.votes),
        lateAnswers: inRange(events.lateAnswers),
        finalized: inRange(events.finalized),
        challengers: inRange(events.challengers),
      });
    }
    expect([...replay.figures(now).values()]).to.deep.equal([...whole.values()]);
    // 831 jobs (seconds 1, 14, … below 10,800); license 1 votes on those whose id is 0, 5 or 6 modulo 7: 355.
    expect(whole.get(1n)).to.include({ windows: 18, beatWindows: 18, jobsAsked: 831, votes: 355, agreed: 355, participationBps: 4_271 });
  });

  it("publishes peer figures as medians over other operators' latest reports, its own operator at the report's block left out", function () {
    const C = CONSUMER;
    const D = "0x00000000000000000000000000000000000000dd";
    // Licenses 1 (A), 2 (B), 3 (C); license 2 moves to A at block 50, so A's later reports are no witness of it.
    const delegations = [
      { ...at(1), licenseId: 1n, operator: A },
      { ...at(1, 1), licenseId: 2n, operator: B },
      { ...at(1, 2), licenseId: 3n, operator: C },
      { ...at(50), licenseId: 2n, operator: null },
      { ...at(50, 1), licenseId: 2n, operator: A },
    ];
    const lookup = operatorLookup(delegations);
    expect([at(0), at(1, 1), at(49), at(50), at(50, 1), at(99)].map((position) => lookup(2n, position))).to.deep.equal([
      null,
      B,
      B,
      null,
      A,
      A,
    ]);
    expect(lookup(9n, at(99))).to.equal(null);
    const report = (
      operator: string,
      licenseId: bigint,
      block: number,
      peers: Array<[bigint, number, number, number]>,
      epoch = 3,
    ): QosReportEvent => ({
      ...at(block),
      operator,
      licenseId,
      epoch,
      apiProbes: 0,
      apiCorrect: 0,
      apiErrors: 0,
      apiLatencyP50Ms: 0,
      apiLatencyP95Ms: 0,
      evmSourceLatencyP50Ms: 1,
      svmSourceLatencyP50Ms: 1,
      evmHeadLagSeconds: 1,
      peerRounds: 20,
      peers: peers.map(([id, roundsObserved, roundsSigned, medianSigningMs]) => ({
        licenseId: id,
        roundsObserved,
        roundsSigned,
        medianSigningMs,
      })),
    });
    const reports = [
      report(A, 1n, 10, [
        [2n, 20, 20, 30],
        [3n, 20, 10, 50],
      ]),
      report(B, 2n, 11, [
        [1n, 18, 18, 20],
        [3n, 20, 12, 70],
      ]),
      report(C, 3n, 12, [
        [1n, 20, 20, 25],
        [2n, 20, 19, 35],
        [3n, 20, 20, 1],
      ]),
      // D reports nothing signed of license 3 yet (observed 0): no entry counts; another epoch's report neither.
      report(D, 4n, 13, [[3n, 0, 0, 0]]),
      report(D, 4n, 5, [[1n, 20, 0, 0]], 2),
    ];
    expect(networkStatus(reports, 3, delegations).peers).to.deep.equal([
      { licenseId: 1, reporters: 2, roundsObserved: 18, signedBps: 10_000, medianSigningMs: 20 },
      { licenseId: 2, reporters: 2, roundsObserved: 20, signedBps: 9_500, medianSigningMs: 30 },
      { licenseId: 3, reporters: 2, roundsObserved: 20, signedBps: 5_000, medianSigningMs: 50 },
    ]);
    // A's latest report, after license 2 became its own: A is no longer a witness of license 2.
    const later = [
      ...reports,
      report(A, 1n, 60, [
        [2n, 20, 20, 5],
        [3n, 20, 20, 45],
      ]),
    ];
    const peers = networkStatus(later, 3, delegations).peers;
    expect(peers[1]).to.deep.equal({ licenseId: 2, reporters: 1, roundsObserved: 20, signedBps: null, medianSigningMs: null });
    expect(peers[2]).to.deep.equal({ licenseId: 3, reporters: 2, roundsObserved: 20, signedBps: 6_000, medianSigningMs: 45 });
    // A third witness that lies: the median stays within the honest two's range.
    const three = [...later, report(D, 4n, 61, [[3n, 20, 0, 99_999]])];
    expect(networkStatus(three, 3, delegations).peers[2]).to.deep.include({ reporters: 3, signedBps: 6_000, medianSigningMs: 45 });
  });
});
