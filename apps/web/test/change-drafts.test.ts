import { decodeFunctionData, formatUnits, maxUint96, parseAbi, type Hex } from "viem";
import { describe, expect, it } from "vitest";

import { describeL2Call, inspectProposal, l2CallsOfProposal } from "@avn/protocol/governance/proposal";
import { L2_DEADLINE_SLACK_SECONDS, type ProposalTiming } from "@avn/protocol/governance/rules";
import { proposalOf } from "../src/pages/governance/build-proposal";
import {
  currentAndBounds,
  readDraft,
  readDrafts,
  type ChangeDraft,
  type ChangeKind,
  type L2Rules,
} from "../src/pages/governance/change-drafts";
import { ADDRESSES, address, EXECUTOR, PROPOSER, RULES } from "./governance-fixtures";

const draft = (kind: ChangeKind, text = "", key = 0): ChangeDraft => ({ key, kind, text });
const problemOf = (kind: ChangeKind, text: string, rules: L2Rules = RULES) => {
  const read = readDraft(draft(kind, text), rules);
  return "problem" in read ? read.problem : undefined;
};

/** The setters the L2 executor calls, to read the calls back independently of how they were made. */
const SETTERS = parseAbi([
  "function setQuorum(uint256 quorum)",
  "function setRequestFee(uint256 fee)",
  "function setJobTimeout(uint256 timeout)",
  "function setLivenessWindow(uint256 window)",
  "function acceptDefaultAdminTransfer()",
]);

describe("readDraft: each change against the L2 setters' bounds", () => {
  it("takes a quorum from 1 to the contract's maximum, in whole licenses", () => {
    expect(readDraft(draft("set-quorum", "1"), RULES)).toEqual({ change: { kind: "set-quorum", quorum: 1n } });
    expect(readDraft(draft("set-quorum", " 10 "), RULES)).toEqual({ change: { kind: "set-quorum", quorum: 10n } });
    expect(problemOf("set-quorum", "0")).toBe("The L2 contract accepts 1 to 10 licenses.");
    expect(problemOf("set-quorum", "11")).toBe("The L2 contract accepts 1 to 10 licenses.");
    expect(problemOf("set-quorum", "2.5")).toBe("Enter a whole number of licenses.");
    expect(problemOf("set-quorum", "")).toBe("Enter the new quorum, in licenses.");
  });

  it("takes a job timeout between the contract's minimum and maximum, both included", () => {
    expect(problemOf("set-job-timeout", "59")).toBe("The L2 contract accepts 60 to 86400 seconds.");
    expect(readDraft(draft("set-job-timeout", "60"), RULES)).toEqual({ change: { kind: "set-job-timeout", seconds: 60n } });
    expect(readDraft(draft("set-job-timeout", "86400"), RULES)).toEqual({ change: { kind: "set-job-timeout", seconds: 86_400n } });
    expect(problemOf("set-job-timeout", "86401")).toBe("The L2 contract accepts 60 to 86400 seconds.");
    expect(problemOf("set-liveness-window", "0")).toBe("The L2 contract accepts 1 to 604800 seconds.");
    expect(problemOf("set-liveness-window", "1e3")).toBe("Enter a whole number of seconds.");
  });

  it("takes a request fee in tokens with up to 18 decimals, zero included, up to what a uint96 holds", () => {
    expect(readDraft(draft("set-request-fee", "0.25"), RULES)).toEqual({ change: { kind: "set-request-fee", fee: 25n * 10n ** 16n } });
    expect(readDraft(draft("set-request-fee", "0"), RULES)).toEqual({ change: { kind: "set-request-fee", fee: 0n } });
    expect(readDraft(draft("set-request-fee", formatUnits(maxUint96, 18)), RULES)).toEqual({
      change: { kind: "set-request-fee", fee: maxUint96 },
    });
    expect(problemOf("set-request-fee", formatUnits(maxUint96 + 1n, 18))).toMatch(/^The L2 contract accepts a fee of at most /);
    expect(problemOf("set-request-fee", "0.0000000000000000001")).toBe("The fee has more than 18 decimals.");
    expect(problemOf("set-request-fee", "-1")).toBe("Enter the fee as a number of tokens, like 1.5.");
  });

  it("accepts the admin role only while every contract's handover to the executor is pending", () => {
    expect(readDraft(draft("accept-admin"), RULES)).toEqual({ change: { kind: "accept-admin" } });
    const licenseNotPending = {
      ...RULES,
      admins: { ...RULES.admins, NodeLicense: { admin: RULES.admins.NodeLicense.admin, pending: address(0) } },
    };
    expect(problemOf("accept-admin", "", licenseNotPending)).toBe(
      "NodeLicense has no admin handover to the governance executor pending: the batch would fail on L2.",
    );
    const twoNotPending = {
      ...licenseNotPending,
      admins: { ...licenseNotPending.admins, StakedToken: { admin: RULES.admins.StakedToken.admin, pending: address(0x99) } },
    };
    expect(problemOf("accept-admin", "", twoNotPending)).toBe(
      "StakedToken, NodeLicense have no admin handover to the governance executor pending: the batch would fail on L2.",
    );
    // Addresses compare whatever their case.
    const done = Object.fromEntries(
      Object.keys(RULES.admins).map((name) => [name, { admin: EXECUTOR.toLowerCase() as Hex, pending: address(0) }]),
    ) as unknown as L2Rules["admins"];
    expect(problemOf("accept-admin", "", { ...RULES, admins: done })).toBe(
      "Governance already administers the L2 contracts: there is nothing to accept.",
    );
  });

  it("says each field's present value and bounds", () => {
    expect(currentAndBounds("set-quorum", RULES)).toBe("Now 3 licenses; 1 to 10.");
    expect(currentAndBounds("set-request-fee", RULES)).toBe("Now 1 staked tokens; 0 or more, up to 18 decimals.");
    expect(currentAndBounds("set-job-timeout", RULES)).toBe("Now 600 s (10 min); 60 to 86400 s.");
  });
});

describe("readDrafts: the whole form", () => {
  it("blocks an empty form and a form whose rules are not read yet", () => {
    expect(readDrafts([], RULES).blocker).toBe("Add a change to propose.");
    expect(readDrafts([draft("set-quorum", "5")], undefined).blocker).toBe("Reading the L2 contracts' present values…");
  });

  it("refuses the same change twice and names the first change with a problem", () => {
    const read = readDrafts([draft("set-quorum", "5", 10), draft("set-job-timeout", "1", 11), draft("set-quorum", "6", 12)], RULES);
    expect(read.changes).toEqual([{ kind: "set-quorum", quorum: 5n }]);
    expect(read.problems.get(11)).toBe("The L2 contract accepts 60 to 86400 seconds.");
    expect(read.problems.get(12)).toBe("Change 1 already makes this change: keep one.");
    expect(read.problems.has(10)).toBe(false);
    expect(read.blocker).toBe("Change 2: The L2 contract accepts 60 to 86400 seconds.");
  });

  it("turns every kind of draft into the L2 calls of one proposal, and the proposal reads back as those calls", () => {
    const drafts = [
      draft("set-quorum", "5", 1),
      draft("set-request-fee", "0.25", 2),
      draft("set-job-timeout", "120", 3),
      draft("set-liveness-window", "600", 4),
      draft("accept-admin", "", 5),
    ];
    const { changes, problems, blocker } = readDrafts(drafts, RULES);
    expect([problems.size, blocker]).toEqual([0, undefined]);

    const timing: ProposalTiming = { votingDelay: 10n, votingPeriod: 50n, timelockDelay: 3_600n, now: 1_700_000_000n };
    const proposal = proposalOf({
      changes,
      note: "Tune the network",
      proposer: PROPOSER,
      addresses: ADDRESSES,
      timing,
      l1BlockSeconds: 12,
    });
    expect(proposal.targets).toEqual([ADDRESSES.l1Messenger]);
    expect(proposal.values).toEqual([0n]);
    expect(proposal.description).toBe(
      [
        "Tune the network",
        "",
        "- set the quorum to 5 licenses",
        "- set the request fee to 0.25 staked tokens (250000000000000000 base units)",
        "- set the job timeout to 120 s",
        "- set the liveness window to 600 s",
        "- accept the admin role of the L2 protocol contracts",
        "",
        `#proposer=${PROPOSER}`,
      ].join("\n"),
    );

    const batch = l2CallsOfProposal(proposal.calldatas);
    expect(batch?.executor).toBe(EXECUTOR);
    // The whole vote (60 blocks of 12 s) and the timelock, then the slack for the relay.
    expect(batch?.deadline).toBe(timing.now + 60n * 12n + 3_600n + L2_DEADLINE_SLACK_SECONDS);
    const calls = batch!.calls.map((call) => {
      const { functionName, args } = decodeFunctionData({ abi: SETTERS, data: call.data });
      return [call.target, functionName, ...(args ?? [])];
    });
    const { l2 } = ADDRESSES;
    expect(calls).toEqual([
      [l2.NodeRegistry, "setQuorum", 5n],
      [l2.VerificationRegistry, "setRequestFee", 25n * 10n ** 16n],
      [l2.VerificationRegistry, "setJobTimeout", 120n],
      [l2.NodeRegistry, "setLivenessWindow", 600n],
      [l2.StakedToken, "acceptDefaultAdminTransfer"],
      [l2.NodeLicense, "acceptDefaultAdminTransfer"],
      [l2.NodeRegistry, "acceptDefaultAdminTransfer"],
      [l2.VerificationRegistry, "acceptDefaultAdminTransfer"],
      [l2.RewardPools, "acceptDefaultAdminTransfer"],
    ]);
    expect(batch!.calls.every((call) => call.value === 0n)).toBe(true);
    expect(describeL2Call(batch!.calls[0], l2)).toBe("NodeRegistry.setQuorum(5)");

    // The proposal list reads it as one of this page's, with nothing to warn about.
    const inspected = inspectProposal(proposal, { ...ADDRESSES, l2 });
    expect(inspected.warnings).toEqual([]);
    expect(inspected.l2Deadline).toBe(batch!.deadline);
    expect(inspected.changes).toHaveLength(9);
  });
});
