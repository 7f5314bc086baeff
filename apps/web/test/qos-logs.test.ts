import { IgnoreReason } from "@avn/protocol/constants";
import { CHALLENGER_ROLE, epochQos, type QosEvents } from "@avn/protocol/qos";
import { keccak256, pad, parseEventLogs, toHex, type Address, type Hex, type Log } from "viem";
import { describe, expect, it } from "vitest";

import {
  blockRanges,
  mergeQosEvents,
  pruneQosEvents,
  QOS_EVENTS,
  qosEventsOf,
  registryAnswerHash,
  requestBlocks,
  type QosLog,
} from "@avn/protocol/qos-logs";

import { epochFrames } from "../src/pages/network/qos-logs";
import { encodedLog } from "./encoded-log";
import { address } from "./governance-fixtures";

const NODE_REGISTRY = address(0x4e);
const VERIFICATION_REGISTRY = address(0x56);
const OWNER_ACCOUNT = address(0x0a);
const REQUESTER = address(0xc0);
const CHALLENGER = address(0xcc);
const OPERATOR = address(0x0b);
const OTHER_OPERATOR = address(0x0d);
/** An EVM owner and asset as the registry stores them: addresses left-padded to 32 bytes. */
const OWNER = pad(address(0x0a).toLowerCase() as Hex);
const ASSET = pad(address(0xa5).toLowerCase() as Hex);
const QUERY_RESULT = pad("0x02");
/**
 * The registry's answer hash of (chain 0, OWNER, ASSET), balance 123,456 and QUERY_RESULT, computed apart
 * with ethers' AbiCoder: the shared decoder must hash as the registry does.
 */
const ANSWER = "0x39c0949c15aaff872b2827a8bb1deda9bc50405124a37383b2450fb12a61a0b0";

let nextIndex = 0;
/** One registry event as a node would return it, at `block`. */
const emit = (emitter: Address, eventName: string, args: Record<string, unknown>, block: number): Log =>
  encodedLog(QOS_EVENTS, eventName, args, { address: emitter, logIndex: nextIndex++, blockNumber: BigInt(block) });
/** Logs decoded as the page's `getLogs` decodes them (strict, by the QoS events' ABI). */
const decode = (logs: Log[]) => parseEventLogs({ abi: QOS_EVENTS, logs, strict: true }) as unknown as QosLog[];

const delegated = (licenseId: bigint, operator: Address, block: number) =>
  emit(NODE_REGISTRY, "Delegated", { licenseId, owner: OWNER_ACCOUNT, operator }, block);
const beat = (operator: Address, timestamp: number, block: number) =>
  emit(NODE_REGISTRY, "HeartbeatRecorded", { operator, timestamp: BigInt(timestamp), capacity: 0n }, block);
const requested = (jobId: bigint, block: number, requester = REQUESTER) =>
  emit(VERIFICATION_REGISTRY, "VerificationRequested", { jobId, requester, chain: 0, owner: OWNER, asset: ASSET, fee: 10n }, block);
const vote = (jobId: bigint, licenseId: bigint, resultHash: Hex, block: number) =>
  emit(VERIFICATION_REGISTRY, "VoteSubmitted", { jobId, licenseId, operator: OPERATOR, resultHash, sourceBlock: 100n }, block);
const fulfilled = (jobId: bigint, block: number) =>
  emit(
    VERIFICATION_REGISTRY,
    "VerificationFulfilled",
    { jobId, chain: 0, owner: OWNER, asset: ASSET, balance: 123_456n, queryResultHash: QUERY_RESULT, sourceBlock: 100n },
    block,
  );
const ignored = (jobId: bigint, operator: Address, reason: number, block: number) =>
  emit(VERIFICATION_REGISTRY, "SubmissionIgnored", { jobId, operator, reason }, block);
const committed = (commitment: Hex, block: number) =>
  emit(VERIFICATION_REGISTRY, "ResultsCommitted", { operator: OPERATOR, commitment }, block);
const revealed = (commitment: Hex, block: number) =>
  emit(VERIFICATION_REGISTRY, "ResultsRevealed", { operator: OPERATOR, commitment }, block);
const role = (granted: boolean, emitter: Address, roleId: Hex, account: Address, block: number) =>
  emit(emitter, granted ? "RoleGranted" : "RoleRevoked", { role: roleId, account, sender: OWNER_ACCOUNT }, block);

describe("the QoS events from the registries' encoded logs", () => {
  it("hashes a result as the registry hashes votes, as the API does", () => {
    expect(registryAnswerHash({ chain: 0, owner: OWNER, asset: ASSET }, 123_456n, QUERY_RESULT)).toBe(ANSWER);
    // Every part of the subject counts: another chain is another answer.
    expect(registryAnswerHash({ chain: 1, owner: OWNER, asset: ASSET }, 123_456n, QUERY_RESULT)).toBe(
      "0xb906b055bbce12b1c5c4aacaa18d700e780a699e4427d839c72229fc81ac667c",
    );
  });

  it("decodes each event into epochQos's shape, with its position and its job's block time", () => {
    const logs = decode([
      delegated(1n, OPERATOR, 10),
      emit(NODE_REGISTRY, "Undelegated", { licenseId: 2n, owner: OWNER_ACCOUNT, operator: OPERATOR }, 11),
      emit(NODE_REGISTRY, "DelegationVoided", { licenseId: 3n, operator: OPERATOR }, 11),
      beat(OPERATOR, 1_000, 12),
      requested(7n, 13),
      vote(7n, 1n, ANSWER, 14),
      ignored(7n, OTHER_OPERATOR, IgnoreReason.jobFinalized, 14),
      // Only an answer that came after the finalization is an answer: other reasons are not.
      ignored(7n, OTHER_OPERATOR, IgnoreReason.licenseNotLive, 14),
      fulfilled(7n, 14),
      // Commit–reveal: a commitment, and the reveal of it.
      committed(pad("0xc1"), 13),
      revealed(pad("0xc1"), 14),
    ]);
    expect(requestBlocks(logs)).toEqual([13n]);
    const events = qosEventsOf(logs, new Map([[13n, 1_010]]), NODE_REGISTRY);
    const at = (block: number, log: number) => ({ block, logIndex: logs[log].logIndex });
    expect(events).toEqual({
      delegations: [
        { ...at(10, 0), licenseId: 1n, operator: OPERATOR.toLowerCase() },
        { ...at(11, 1), licenseId: 2n, operator: null },
        { ...at(11, 2), licenseId: 3n, operator: null },
      ],
      heartbeats: [{ ...at(12, 3), operator: OPERATOR.toLowerCase(), timestamp: 1_000 }],
      requests: [{ ...at(13, 4), jobId: 7n, requester: REQUESTER.toLowerCase(), timestamp: 1_010 }],
      votes: [{ ...at(14, 5), jobId: 7n, licenseId: 1n, resultHash: ANSWER, transactionIndex: 0 }],
      lateAnswers: [{ ...at(14, 6), jobId: 7n, operator: OTHER_OPERATOR.toLowerCase() }],
      finalized: [{ ...at(14, 8), jobId: 7n, resultHash: ANSWER }],
      challengers: [],
      commits: [{ ...at(13, 9), operator: OPERATOR.toLowerCase(), commitment: pad("0xc1") }],
      reveals: [{ ...at(14, 10), operator: OPERATOR.toLowerCase(), commitment: pad("0xc1"), transactionIndex: 0 }],
      attestations: [],
      livenessWindows: [],
    } satisfies QosEvents);
  });

  it("takes challenger grants and revocations of the node registry's CHALLENGER_ROLE only", () => {
    const otherRole = keccak256(toHex("RECORDER_ROLE"));
    const logs = decode([
      role(true, NODE_REGISTRY, CHALLENGER_ROLE, CHALLENGER, 5),
      role(true, NODE_REGISTRY, otherRole, REQUESTER, 5),
      // The verification registry is an AccessControl too; its roles say nothing about challengers.
      role(true, VERIFICATION_REGISTRY, CHALLENGER_ROLE, REQUESTER, 5),
      role(false, NODE_REGISTRY, CHALLENGER_ROLE, CHALLENGER, 6),
    ]);
    expect(qosEventsOf(logs, new Map(), NODE_REGISTRY).challengers).toEqual([
      { block: 5, logIndex: logs[0].logIndex, account: CHALLENGER.toLowerCase(), granted: true },
      { block: 6, logIndex: logs[3].logIndex, account: CHALLENGER.toLowerCase(), granted: false },
    ]);
  });

  it("refuses a job without its block's time rather than count it at the wrong time", () => {
    expect(() => qosEventsOf(decode([requested(1n, 20)]), new Map(), NODE_REGISTRY)).toThrow(/no timestamp for block 20/);
  });

  it("reads ranges of at most 5,000 blocks, the last one cut at the head", () => {
    expect(blockRanges(0n, 12_000n)).toEqual([
      { fromBlock: 0n, toBlock: 4_999n },
      { fromBlock: 5_000n, toBlock: 9_999n },
      { fromBlock: 10_000n, toBlock: 12_000n },
    ]);
    expect(blockRanges(7n, 7n)).toEqual([{ fromBlock: 7n, toBlock: 7n }]);
    expect(blockRanges(8n, 7n)).toEqual([]);
  });
});

describe("the figures from the decoded events", () => {
  const WINDOW = 100;
  const grid = { epochsStart: 1_000, epochDuration: 1_000 };
  /** Block n is at time 1,000 + 10 n: epoch 0 is blocks 0 to 99, epoch 1 blocks 100 to 199. */
  const timeOf = (block: number) => 1_000 + 10 * block;

  /**
   * Blocks 0 to `head`: a license delegated to OPERATOR, which beats every 5 blocks; a job in epoch 0 its vote
   * agrees on, a challenge in epoch 1 it disagrees on, and (from block 450) a job in epoch 4.
   */
  const history = (head: number) => {
    const logs: Log[] = [delegated(1n, OPERATOR, 0), role(true, NODE_REGISTRY, CHALLENGER_ROLE, CHALLENGER, 0)];
    for (let block = 0; block <= head; block += 5) logs.push(beat(OPERATOR, timeOf(block), block));
    logs.push(requested(1n, 50), vote(1n, 1n, ANSWER, 51), fulfilled(1n, 52));
    logs.push(requested(2n, 120, CHALLENGER), vote(2n, 1n, pad("0xbad"), 125), fulfilled(2n, 126));
    if (head >= 452) logs.push(requested(3n, 450), vote(3n, 1n, ANSWER, 451), fulfilled(3n, 452));
    return decode(logs.filter((log) => log.blockNumber! <= BigInt(head)));
  };
  const eventsOf = (logs: QosLog[]) =>
    qosEventsOf(logs, new Map(requestBlocks(logs).map((block) => [block, timeOf(Number(block))])), NODE_REGISTRY);

  it("offers the current epoch, counted to the head, and up to three before it, each counted to its end", () => {
    expect(epochFrames(grid, 5_500, WINDOW)).toEqual([
      { epoch: 4, start: 5_000, end: 6_000, now: 5_500, livenessWindow: WINDOW },
      { epoch: 3, start: 4_000, end: 5_000, now: 5_000, livenessWindow: WINDOW },
      { epoch: 2, start: 3_000, end: 4_000, now: 4_000, livenessWindow: WINDOW },
      { epoch: 1, start: 2_000, end: 3_000, now: 3_000, livenessWindow: WINDOW },
    ]);
    expect(epochFrames(grid, 2_400, WINDOW).map((frame) => frame.epoch)).toEqual([1, 0]);
    // Before the first epoch starts: epoch 0, nothing before it.
    expect(epochFrames(grid, 500, WINDOW)).toEqual([{ epoch: 0, start: 1_000, end: 2_000, now: 500, livenessWindow: WINDOW }]);
  });

  it("gives epochQos what it needs: a vote equal to the result agrees, another disagrees; a challenger's job is a challenge", () => {
    const [current, previous] = epochFrames(grid, timeOf(149), WINDOW);
    const events = eventsOf(history(149));
    const before = epochQos(events, previous).get(1n)!;
    expect(before).toMatchObject({ jobsAsked: 1, votes: 1, agreed: 1, disagreed: 0, accuracyBps: 10_000, medianVoteDelayBlocks: 1 });
    expect(before.challengeJobsAsked).toBe(0);
    const now = epochQos(events, current).get(1n)!;
    expect(now).toMatchObject({ jobsAsked: 1, agreed: 0, disagreed: 1, accuracyBps: 0, medianVoteDelayBlocks: 5 });
    expect(now).toMatchObject({ challengeJobsAsked: 1, challengeJobsAnswered: 1, challengeMedianVoteDelayBlocks: 5 });
  });

  it("reaches the same figures read at once or block range by block range, with what no offered epoch counts dropped", () => {
    const logs = history(499);
    const frames = epochFrames(grid, timeOf(499), WINDOW);
    expect(frames.map((frame) => frame.epoch)).toEqual([4, 3, 2, 1]);
    const whole = eventsOf(logs);
    let pieces: QosEvents = eventsOf([]);
    for (const range of blockRanges(0n, 499n, 40n)) {
      const added = eventsOf(logs.filter((log) => log.blockNumber >= range.fromBlock && log.blockNumber <= range.toBlock));
      pieces = pruneQosEvents(mergeQosEvents(pieces, added), frames.at(-1)!.start - WINDOW);
    }
    // Epoch 0's job is gone, the rest is the same.
    expect(pieces.requests.map((event) => event.jobId)).toEqual([2n, 3n]);
    for (const frame of frames) expect(epochQos(pieces, frame)).toEqual(epochQos(whole, frame));
    expect(epochQos(pieces, frames[0]).get(1n)).toMatchObject({ jobsAsked: 1, agreed: 1 });
  });

  it("drops the heartbeats and jobs before a time with the jobs' votes and outcomes, and keeps every delegation and grant", () => {
    const events = eventsOf(history(149));
    const pruned = pruneQosEvents(events, timeOf(100));
    expect(pruned.delegations).toEqual(events.delegations);
    expect(pruned.challengers).toEqual(events.challengers);
    expect(pruned.heartbeats.map((event) => event.block)).toEqual([100, 105, 110, 115, 120, 125, 130, 135, 140, 145]);
    expect(pruned.requests.map((event) => event.jobId)).toEqual([2n]);
    expect(pruned.votes.map((event) => event.jobId)).toEqual([2n]);
    expect(pruned.finalized.map((event) => event.jobId)).toEqual([2n]);
  });
});
