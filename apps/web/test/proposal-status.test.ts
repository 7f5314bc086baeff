import { zeroHash } from "viem";
import { describe, expect, it } from "vitest";

import { RELAY_MARGIN_SECONDS } from "@avn/protocol/governance/rules";
import {
  blocksAndTime,
  defeatReason,
  nextStep,
  tooLateForL2,
  voteStillOpen,
  type L2Outcome,
  type ProposalStatus,
} from "../src/pages/governance/proposal-status";
import { EXECUTOR, PROPOSER } from "./governance-fixtures";

const E18 = 10n ** 18n;
/** The L1's block time the page is configured with. */
const BLOCK_SECONDS = 12;
const NOW = 1_700_000_000n; // 14 Nov 2023, 22:13:20 UTC

/** A proposal read at L1 block 150, at NOW, voting from block 100 to block 200, its batch due on L2 a day from now. */
const status = (changes: Partial<ProposalStatus> = {}): ProposalStatus => ({
  id: 1n,
  state: "Active",
  proposer: PROPOSER,
  targets: [],
  values: [],
  calldatas: [],
  descriptionHash: zeroHash,
  batch: { calls: [], deadline: NOW + 86_400n, executor: EXECUTOR },
  votes: { for: 0n, against: 0n, abstain: 0n },
  quorum: 100n * E18,
  snapshotBlock: 100n,
  deadlineBlock: 200n,
  eta: undefined,
  block: 150n,
  time: NOW,
  ...changes,
});
const step = (changes: Partial<ProposalStatus>, l2?: L2Outcome) => nextStep(status(changes), BLOCK_SECONDS, l2);

describe("a proposal's next step along its timeline", () => {
  it("counts the blocks until voting starts: the block after the snapshot", () => {
    expect(step({ state: "Pending", block: 90n })).toBe("Voting starts after block 100, in 11 blocks (~2 min 12 s).");
    expect(step({ state: "Pending", block: 100n })).toBe("Voting starts after block 100, in 1 block (~12 s).");
  });

  it("keeps the vote open until the block before its last, since a vote sent now lands in a later block", () => {
    expect(voteStillOpen(status({ block: 199n }))).toBe(true);
    expect(step({ block: 199n })).toBe("Voting is open until block 200: 1 block (~12 s) left.");
    expect(voteStillOpen(status({ block: 200n }))).toBe(false);
    expect(step({ block: 200n })).toBe("Voting closes with block 200, the latest: a vote sent now would come too late.");
    expect(voteStillOpen(status({ state: "Succeeded", block: 150n }))).toBe(false);
  });

  it("says why a vote was defeated: the quorum counts for and abstain, and for must beat against", () => {
    const short = { state: "Defeated", votes: { for: 60n * E18, against: 0n, abstain: 40n * E18 - 1n } } as const;
    expect(defeatReason(status(short))).toBe("the quorum of 100 votes was not reached");
    const reached = { state: "Defeated", votes: { for: 60n * E18, against: 60n * E18, abstain: 40n * E18 } } as const;
    expect(step(reached)).toBe("The proposal was defeated: no more votes for than against.");
  });

  it("releases a queued proposal at its eta exactly, not a second before", () => {
    expect(step({ state: "Queued", eta: NOW + 1n })).toBe("Queued: executable in 1 s (at 14 Nov 2023, 22:13:21, L1 time).");
    expect(step({ state: "Queued", eta: NOW })).toBe("Queued and released by the timelock: execute it.");
    expect(step({ state: "Queued", eta: NOW - 1n })).toBe("Queued and released by the timelock: execute it.");
  });

  it("calls an execution too late once less than the relay margin is left before the L2 deadline", () => {
    const deadlineIn = (seconds: bigint) => ({ calls: [], deadline: NOW + seconds, executor: EXECUTOR });
    expect(tooLateForL2(status({ batch: deadlineIn(RELAY_MARGIN_SECONDS) }))).toBeUndefined();
    expect(tooLateForL2(status({ batch: deadlineIn(RELAY_MARGIN_SECONDS - 1n) }))).toBe(
      "Its L2 batch must run by 14 Nov 2023, 22:23:19, too soon for the bridge to carry it: it can no longer take effect on L2 (propose it again).",
    );
    expect(step({ state: "Queued", eta: NOW, batch: deadlineIn(RELAY_MARGIN_SECONDS - 1n) })).toBe(
      "Queued, but too late: its L2 batch must run by 14 Nov 2023, 22:23:19, too soon for the bridge to carry it: it can no longer take effect on L2 (propose it again).",
    );
    // A proposal of another shape has no L2 deadline to miss.
    expect(tooLateForL2(status({ batch: undefined }))).toBeUndefined();
  });

  it("follows an executed proposal to its L2 outcome", () => {
    const messageHash = zeroHash;
    const executed = { state: "Executed" } as const;
    expect(step(executed)).toBe("Executed on L1; checking L2…");
    expect(step(executed, { kind: "no message" })).toBe("Executed on L1.");
    expect(step(executed, { kind: "awaiting relay", messageHash })).toBe("Executed on L1; its message awaits relay to L2.");
    expect(step(executed, { kind: "executed", messageHash })).toBe("Executed on L1 and on L2.");
    expect(step(executed, { kind: "failed", messageHash })).toBe(
      "Executed on L1; its L2 batch failed and can be replayed on L2 until 15 Nov 2023, 22:13:20 (L2 time).",
    );
    expect(step(executed, { kind: "expired", messageHash })).toBe(
      "Executed on L1; its L2 batch did not run before its deadline and never will.",
    );
  });

  it("never counts negative blocks", () => {
    expect(blocksAndTime(-3n, BLOCK_SECONDS)).toBe("0 blocks (~0 s)");
    expect(blocksAndTime(300n, 2)).toBe("300 blocks (~10 min)");
  });
});
