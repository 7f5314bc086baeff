import { livenessWindowAt, QOS_EVENTS, qosEventsOf, requestBlocks, type QosLog } from "@avn/protocol/qos-logs";
import { NOBODY_EARNED_ROOT, settlementTree } from "@avn/protocol/rewards";
import { pad, parseAbi, parseEventLogs, type AbiEvent, type Address, type Hex, type Log, type PublicClient } from "viem";
import { describe, expect, it } from "vitest";

import { nodeRegistryAbi } from "../src/generated/abis";
import { formatTime } from "../src/lib/format";
import { updateQosSnapshot } from "../src/pages/network/qos-logs";
import {
  claimStep,
  computeSettlement,
  epochsWithPools,
  holdsEpoch,
  settlementStatus,
  type SettlementState,
} from "../src/pages/network/settlements";
import { encodedLog } from "./encoded-log";
import { address } from "./governance-fixtures";

const NODE_REGISTRY = address(0x4e);
const VERIFICATION_REGISTRY = address(0x56);
const CONTRACTS = { nodeRegistry: NODE_REGISTRY, verificationRegistry: VERIFICATION_REGISTRY };
const OWNER_ACCOUNT = address(0x0a);
const REQUESTER = address(0xc0);
/** License 1's operator beats all the time; license 2's only in the first 60 blocks of each epoch (60 % uptime). */
const STEADY = address(0x0b);
const PATCHY = address(0x0d);
const OWNER = pad(address(0x0a).toLowerCase() as Hex);
const ASSET = pad(address(0xa5).toLowerCase() as Hex);
const QUERY_RESULT = pad("0x02");
/** The registry's answer hash of (chain 0, OWNER, ASSET), balance 123,456 and QUERY_RESULT (qos-logs.test.ts checks it). */
const ANSWER = "0x39c0949c15aaff872b2827a8bb1deda9bc50405124a37383b2450fb12a61a0b0";
/**
 * The commit–reveal events, encoded apart: where the protocol counts only answers committed before the first
 * reveal, they give the votes their points; where it does not know them, the page's reads pass over them.
 */
const COMMIT_REVEAL = parseAbi([
  "event ResultsCommitted(address indexed operator, bytes32 indexed commitment)",
  "event ResultsRevealed(address indexed operator, bytes32 indexed commitment)",
]);

/** Epochs of 1,000 s from 1,000; block n at 1,000 + 10 n, so epoch e is blocks 100 e to 100 e + 99. */
const GRID = { epochsStart: 1_000, epochDuration: 1_000 };
const WINDOW = 100;
const timeOf = (block: number) => 1_000 + 10 * block;
/** `RewardPools.settlementOf(epoch).settlementOpensAt` with a settlement delay of 50 s: the last block before it is 100 (e + 1) + 4. */
const opensAt = (epoch: number) => GRID.epochsStart + (epoch + 1) * GRID.epochDuration + 50;
const POOL = 1_000n;

let nextIndex = 0;
const at = (block: number, transactionIndex = 0) => ({ logIndex: nextIndex++, blockNumber: BigInt(block), transactionIndex });
const emit = (emitter: Address, eventName: string, args: Record<string, unknown>, block: number, transactionIndex = 0): Log =>
  encodedLog(QOS_EVENTS, eventName, args, { address: emitter, ...at(block, transactionIndex) });

/**
 * One job of `REQUESTER` at `block`: both operators (or only the steady one) commit the next block, reveal and
 * vote the block after, which finalizes it.
 */
function job(jobId: bigint, block: number, { patchyVotes = true } = {}): Log[] {
  const [commitA, commitB] = [pad(`0x${jobId.toString(16)}a`), pad(`0x${jobId.toString(16)}b`)];
  const reveal = (operator: Address, commitment: Hex, licenseId: bigint, transactionIndex: number) => [
    encodedLog(
      COMMIT_REVEAL,
      "ResultsRevealed",
      { operator, commitment },
      { address: VERIFICATION_REGISTRY, ...at(block + 2, transactionIndex) },
    ),
    emit(
      VERIFICATION_REGISTRY,
      "VoteSubmitted",
      { jobId, licenseId, operator, resultHash: ANSWER, sourceBlock: 100n },
      block + 2,
      transactionIndex,
    ),
  ];
  return [
    emit(
      VERIFICATION_REGISTRY,
      "VerificationRequested",
      { jobId, requester: REQUESTER, chain: 0, owner: OWNER, asset: ASSET, fee: 10n },
      block,
    ),
    encodedLog(
      COMMIT_REVEAL,
      "ResultsCommitted",
      { operator: STEADY, commitment: commitA },
      { address: VERIFICATION_REGISTRY, ...at(block + 1, 0) },
    ),
    encodedLog(
      COMMIT_REVEAL,
      "ResultsCommitted",
      { operator: PATCHY, commitment: commitB },
      { address: VERIFICATION_REGISTRY, ...at(block + 1, 1) },
    ),
    ...reveal(STEADY, commitA, 1n, 0),
    ...(patchyVotes ? reveal(PATCHY, commitB, 2n, 1) : []),
    emit(
      VERIFICATION_REGISTRY,
      "VerificationFulfilled",
      { jobId, chain: 0, owner: OWNER, asset: ASSET, balance: 123_456n, queryResultHash: QUERY_RESULT, sourceBlock: 100n },
      block + 2,
      1,
    ),
  ];
}

/**
 * Blocks 0 to `head`: the registry's constructor sets the window, two licenses are delegated, their operators
 * beat every 5 blocks (the patchy one in the first 60 of each epoch only); a job in epoch 1, one in epoch 5, and
 * one at the end of epoch 5 (asked of the steady license alone: the patchy one is not live then) whose vote comes
 * after its settlement's boundary (block 604).
 */
function history(head: number, { windowEvent = true } = {}): Log[] {
  const logs: Log[] = [];
  if (windowEvent)
    logs.push(
      encodedLog(
        nodeRegistryAbi,
        "LivenessWindowUpdated",
        { oldWindow: 0n, newWindow: BigInt(WINDOW) },
        { address: NODE_REGISTRY, ...at(0) },
      ),
    );
  logs.push(emit(NODE_REGISTRY, "Delegated", { licenseId: 1n, owner: OWNER_ACCOUNT, operator: STEADY }, 0));
  logs.push(emit(NODE_REGISTRY, "Delegated", { licenseId: 2n, owner: OWNER_ACCOUNT, operator: PATCHY }, 0));
  for (let block = 0; block <= head; block += 5) {
    logs.push(emit(NODE_REGISTRY, "HeartbeatRecorded", { operator: STEADY, timestamp: BigInt(timeOf(block)), capacity: 0n }, block, 2));
    if (block % 100 < 60)
      logs.push(emit(NODE_REGISTRY, "HeartbeatRecorded", { operator: PATCHY, timestamp: BigInt(timeOf(block)), capacity: 0n }, block, 3));
  }
  logs.push(
    ...job(1n, 150),
    ...job(2n, 550),
    ...job(3n, 595, { patchyVotes: false }).map((log) => (log.blockNumber! > 595n ? { ...log, blockNumber: log.blockNumber! + 10n } : log)),
  );
  return logs
    .filter((log) => log.blockNumber! <= BigInt(head))
    .sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
}

/** A node serving `logs` up to `head`: headers, the registries' views and `eth_getLogs`, each call recorded. */
function fakeL2(logs: Log[], head: number) {
  const calls = { logRanges: [] as Array<[bigint, bigint]>, windowReads: [] as Array<bigint | undefined> };
  const client = {
    getBlock: async ({ blockNumber, blockTag }: { blockNumber?: bigint; blockTag?: string }) => {
      const number = blockTag === "latest" ? BigInt(head) : blockNumber!;
      if (number > BigInt(head)) throw new Error(`no block ${number}`);
      return { number, timestamp: BigInt(timeOf(Number(number))) };
    },
    readContract: async ({ functionName, blockNumber }: { functionName: string; blockNumber?: bigint }) => {
      if (functionName === "EPOCHS_START") return BigInt(GRID.epochsStart);
      if (functionName === "EPOCH_DURATION") return BigInt(GRID.epochDuration);
      if (functionName === "livenessWindow") {
        calls.windowReads.push(blockNumber);
        return BigInt(WINDOW);
      }
      throw new Error(`unexpected read ${functionName}`);
    },
    getLogs: async ({
      address,
      events,
      fromBlock,
      toBlock,
    }: {
      address: Address[];
      events: AbiEvent[];
      fromBlock: bigint;
      toBlock: bigint;
    }) => {
      calls.logRanges.push([fromBlock, toBlock]);
      const from = address.map((item) => item.toLowerCase());
      const inRange = logs.filter(
        (log) => log.blockNumber! >= fromBlock && log.blockNumber! <= toBlock && from.includes(log.address.toLowerCase()),
      );
      return parseEventLogs({ abi: events, logs: inRange, strict: true });
    },
  };
  return { client: client as unknown as PublicClient, calls };
}

/** The tree every node computes for `epoch` from all of `logs`, with the boundary and window it should find. */
function referenceTree(logs: Log[], epoch: number) {
  const decoded = parseEventLogs({ abi: QOS_EVENTS, logs, strict: true }) as unknown as QosLog[];
  const events = qosEventsOf(decoded, new Map(requestBlocks(decoded).map((block) => [block, timeOf(Number(block))])), NODE_REGISTRY);
  return settlementTree({
    epoch,
    pool: POOL,
    settlementOpensAt: opensAt(epoch),
    ...GRID,
    livenessWindow: WINDOW,
    throughBlock: 100 * (epoch + 1) + 4,
    events,
  });
}

const snapshotOf = async (logs: Log[], head: number) => {
  const l2 = fakeL2(logs, head);
  const snapshot = await updateQosSnapshot(l2.client, CONTRACTS, 0n, undefined);
  return { ...l2, snapshot };
};

const state = (overrides: Partial<SettlementState> = {}): SettlementState => ({
  pool: POOL,
  claimed: 0n,
  root: NOBODY_EARNED_ROOT,
  accepted: false,
  round: 0n,
  settlementOpensAt: BigInt(opensAt(5)),
  votingClosesAt: BigInt(opensAt(5) + GRID.epochDuration),
  claimsOpenAt: 0n,
  ...overrides,
});

describe("the epochs with a reward pool", () => {
  it("are those funded or rolled over to, less those rolled over from", () => {
    expect(epochsWithPools({ funded: [3n, 1n, 3n], rolledOver: [] })).toEqual([1n, 3n]);
    expect(
      epochsWithPools({
        funded: [1n, 3n],
        rolledOver: [
          { fromEpoch: 1n, toEpoch: 4n },
          { fromEpoch: 4n, toEpoch: 6n },
        ],
      }),
    ).toEqual([3n, 6n]);
  });
});

describe("an ended epoch's settlement, computed in the page", () => {
  it("finds the window in force at a block from the record of its changes", () => {
    const changes = [
      { block: 0, logIndex: 0, window: 100 },
      { block: 40, logIndex: 3, window: 300 },
      { block: 40, logIndex: 1, window: 200 },
    ];
    expect(livenessWindowAt(changes, 39)).toBe(100);
    expect(livenessWindowAt(changes, 40)).toBe(300);
    expect(livenessWindowAt(changes.slice(1), 39)).toBe(undefined);
  });

  it("is the tree every node votes, from the events the page holds: the boundary's block and window, nothing after it", async () => {
    const logs = history(799);
    const { client, calls, snapshot } = await snapshotOf(logs, 799);
    // Epochs 7 (current) to 4 are offered: epoch 5's events are all held.
    expect(snapshot.keptFrom).toBe(GRID.epochsStart + 4 * GRID.epochDuration - WINDOW);
    expect(holdsEpoch(snapshot, 5, WINDOW)).toBe(true);
    const readsBefore = calls.logRanges.length;
    const computed = await computeSettlement(client, CONTRACTS, snapshot, 5, { pool: POOL, settlementOpensAt: BigInt(opensAt(5)) }, 0n);
    expect(computed).toMatchObject({ throughBlock: 604n, livenessWindow: WINDOW, readApart: false });
    // The window came from the constructor's event: no historical call, and no log read either.
    expect(calls.windowReads).toEqual([799n]);
    expect(calls.logRanges.length).toBe(readsBefore);

    const expected = referenceTree(logs, 5);
    expect(computed.tree.root).toBe(expected.root);
    // Both licenses earned, split by score: the steady one left job 3 unanswered by the boundary (50 %
    // participation), the patchy one beat in 6 of 10 windows (60 % uptime): 5,000 to 6,000 of 1,000.
    expect(computed.tree.payouts.map((payout) => [payout.licenseId, payout.amount])).toEqual([
      [1n, 454n],
      [2n, 545n],
    ]);
    // Job 3's vote came after the boundary: counted, it would have changed the split (and the root).
    const withLateVotes = settlementTree({
      epoch: 5,
      pool: POOL,
      settlementOpensAt: opensAt(5),
      ...GRID,
      livenessWindow: WINDOW,
      throughBlock: 799,
      events: snapshot.events,
    });
    expect(withLateVotes.root).not.toBe(expected.root);
  });

  it("reads an epoch older than the page keeps apart, from a window before its start, with the delegations it keeps", async () => {
    const logs = history(799);
    const { client, calls, snapshot } = await snapshotOf(logs, 799);
    expect(holdsEpoch(snapshot, 1, WINDOW)).toBe(false);
    // The page dropped epoch 1's job: from its events alone, nobody earned.
    expect(snapshot.events.requests.map((event) => event.jobId)).toEqual([2n, 3n]);
    calls.logRanges.length = 0;
    const computed = await computeSettlement(client, CONTRACTS, snapshot, 1, { pool: POOL, settlementOpensAt: BigInt(opensAt(1)) }, 0n);
    expect(computed).toMatchObject({ throughBlock: 204n, readApart: true });
    // From the last block before epoch 1's start less a window (block 89) to the boundary.
    expect(calls.logRanges).toEqual([[89n, 204n]]);
    expect(computed.tree.root).toBe(referenceTree(logs, 1).root);
    expect(computed.tree.payouts.map((payout) => payout.licenseId)).toEqual([1n, 2n]);
  });

  it("reads the window at the boundary's block when the page saw no change of it that early", async () => {
    const logs = history(799, { windowEvent: false });
    const { client, calls, snapshot } = await snapshotOf(logs, 799);
    const computed = await computeSettlement(client, CONTRACTS, snapshot, 5, { pool: POOL, settlementOpensAt: BigInt(opensAt(5)) }, 0n);
    expect(calls.windowReads).toEqual([799n, 604n]);
    expect(computed.tree.root).toBe(referenceTree(logs, 5).root);
  });

  it("is not computed before the head the page read reaches the settlement's opening", async () => {
    const { client, snapshot } = await snapshotOf(history(603), 603);
    await expect(
      computeSettlement(client, CONTRACTS, snapshot, 5, { pool: POOL, settlementOpensAt: BigInt(opensAt(5)) }, 0n),
    ).rejects.toThrow(/settlement opens/);
  });
});

describe("what claiming an epoch sends", () => {
  const settled = async () => {
    const logs = history(799);
    const { client, snapshot } = await snapshotOf(logs, 799);
    return (await computeSettlement(client, CONTRACTS, snapshot, 5, { pool: POOL, settlementOpensAt: BigInt(opensAt(5)) }, 0n)).tree;
  };
  const CLAIMS_OPEN = opensAt(5) + 500;
  const accepted = (root: Hex) => state({ accepted: true, root, claimsOpenAt: BigInt(CLAIMS_OPEN) });
  const mine = [
    { licenseId: 2n, claimed: false },
    { licenseId: 9n, claimed: false },
  ];

  it("sends the unclaimed payouts with their proofs once the page's root is accepted and claims are open", async () => {
    const tree = await settled();
    const step = claimStep(5n, accepted(tree.root), CLAIMS_OPEN, tree, mine);
    expect(step).toEqual({ claims: [{ epoch: 5n, licenseId: 2n, amount: 545n, proof: tree.proofOf(2n)!.proof }] });
    expect(claimStep(5n, accepted(tree.root), CLAIMS_OPEN, tree, [{ licenseId: 2n, claimed: true }])).toEqual({
      reason: "Your licenses' rewards of this epoch are claimed.",
    });
    expect(claimStep(5n, accepted(tree.root), CLAIMS_OPEN, tree, [{ licenseId: 9n, claimed: false }])).toEqual({
      reason: "Your licenses earned nothing in this epoch.",
    });
    expect(claimStep(5n, accepted(tree.root), CLAIMS_OPEN, tree, [{ licenseId: 2n, claimed: undefined }])).toEqual({
      reason: "Reading which payouts are claimed…",
    });
  });

  it("sends nothing the contract would refuse, and says why", async () => {
    const tree = await settled();
    const reasonOf = (step: ReturnType<typeof claimStep>) => ("reason" in step ? step.reason : undefined);
    expect(claimStep(5n, state(), opensAt(5) - 1, tree, mine)).toEqual({ reason: `The settlement opens ${formatTime(opensAt(5))}.` });
    expect(reasonOf(claimStep(5n, state(), opensAt(5), tree, mine))).toMatch(/^No root is accepted yet/);
    expect(claimStep(5n, accepted(tree.root), CLAIMS_OPEN, undefined, mine)).toEqual({ reason: "Computing this epoch's payouts…" });
    expect(reasonOf(claimStep(5n, accepted(pad("0xbad")), CLAIMS_OPEN, tree, mine))).toMatch(
      /^The accepted root differs from this page's computation/,
    );
    expect(claimStep(5n, accepted(tree.root.toUpperCase().replace("0X", "0x") as Hex), CLAIMS_OPEN, tree, mine)).toHaveProperty("claims");
    expect(claimStep(5n, accepted(tree.root), CLAIMS_OPEN - 1, tree, mine)).toEqual({
      reason: `Claims open ${formatTime(CLAIMS_OPEN)}, after the dispute period.`,
    });
  });

  it("says where each settlement stands by the L2's time", () => {
    const open = opensAt(5);
    expect(settlementStatus(state(), open - 1)).toBe(`Settlement opens ${formatTime(open)}`);
    expect(settlementStatus(state(), open)).toBe(`Nodes voting the root until ${formatTime(open + 1_000)}`);
    expect(settlementStatus(state(), open, { forRoot: 1n, quorum: 2n })).toBe(
      `Nodes voting the root until ${formatTime(open + 1_000)}; 1 of the 2 votes needed for this page's root`,
    );
    expect(settlementStatus(state(), open + 1_000)).toMatch(/^No root accepted before voting closed/);
    const root = pad("0x01");
    expect(settlementStatus(state({ accepted: true, root, claimsOpenAt: BigInt(open + 500) }), open + 499)).toBe(
      `Root accepted; claims open ${formatTime(open + 500)}`,
    );
    expect(settlementStatus(state({ accepted: true, root, claimsOpenAt: BigInt(open + 500) }), open + 500)).toBe(
      "Root accepted; claims open",
    );
    expect(settlementStatus(state({ accepted: true, claimsOpenAt: BigInt(open + 500) }), open + 500)).toMatch(/^Accepted: nobody earned/);
  });
});
