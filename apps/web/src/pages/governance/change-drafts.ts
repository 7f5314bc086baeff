import { maxUint96, parseUnits, type Address } from "viem";

import { formatAmount, formatDuration } from "../../lib/format";
import type { GovernedContracts, ProtocolChange } from "@avn/protocol/governance/proposal";

/** The changes the page proposes (the CLI's, without raw calls). */
export type ChangeKind = "accept-admin" | "set-quorum" | "set-request-fee" | "set-job-timeout" | "set-liveness-window";

/** A change as the form holds it: its kind and the value as typed. */
export interface ChangeDraft {
  /** Stable across edits, so React keeps each row's inputs. */
  key: number;
  kind: ChangeKind;
  text: string;
}

/** Each kind's name in the form and, for those that take one, its value's label (in the order the form offers them). */
export const CHANGE_KINDS: Record<ChangeKind, { label: string; value?: string }> = {
  "set-quorum": { label: "Set the quorum", value: "new quorum, in licenses" },
  "set-request-fee": { label: "Set the request fee", value: "new request fee, in staked tokens" },
  "set-job-timeout": { label: "Set the job timeout", value: "new job timeout, in seconds" },
  "set-liveness-window": { label: "Set the liveness window", value: "new liveness window, in seconds" },
  "accept-admin": { label: "Accept the admin role of the L2 contracts" },
};

/** The L2 contracts' present values and their setters' bounds, and who administers them. */
export interface L2Rules {
  quorum: bigint;
  maxQuorum: bigint;
  requestFee: bigint;
  jobTimeout: bigint;
  minJobTimeout: bigint;
  maxJobTimeout: bigint;
  livenessWindow: bigint;
  maxLivenessWindow: bigint;
  /** Each governed contract's admin and the admin it is being handed to (zero: none). */
  admins: Record<keyof GovernedContracts, { admin: Address; pending: Address }>;
  executor: Address;
}

/** What the field of `kind` holds now and what it accepts, said next to it. */
export function currentAndBounds(kind: ChangeKind, rules: L2Rules): string {
  switch (kind) {
    case "set-quorum":
      return `Now ${rules.quorum} licenses; 1 to ${rules.maxQuorum}.`;
    case "set-request-fee":
      return `Now ${formatAmount(rules.requestFee, 18, 18)} staked tokens; 0 or more, up to 18 decimals.`;
    case "set-job-timeout":
      return `Now ${rules.jobTimeout} s (${formatDuration(rules.jobTimeout)}); ${rules.minJobTimeout} to ${rules.maxJobTimeout} s.`;
    case "set-liveness-window":
      return `Now ${rules.livenessWindow} s (${formatDuration(rules.livenessWindow)}); 1 to ${rules.maxLivenessWindow} s.`;
    case "accept-admin":
      return "Completes the handover of the four L2 protocol contracts to the governance executor, which their deployment started.";
  }
}

const WHOLE = /^\d+$/;
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/**
 * The change a draft asks for, or why it cannot be proposed. The L2 setters' own bounds are checked here:
 * a value they refuse would pass the vote and the timelock only to fail on L2, a week or more later.
 */
export function readDraft(draft: ChangeDraft, rules: L2Rules): { change: ProtocolChange } | { problem: string } {
  const text = draft.text.trim();
  const whole = (min: bigint, max: bigint, unit: string): bigint | string => {
    if (text === "") return `Enter the ${CHANGE_KINDS[draft.kind].value}.`;
    if (!WHOLE.test(text)) return `Enter a whole number of ${unit}.`;
    const value = BigInt(text);
    return value < min || value > max ? `The L2 contract accepts ${min} to ${max} ${unit}.` : value;
  };
  const outcome = (value: bigint | string, make: (value: bigint) => ProtocolChange) =>
    typeof value === "string" ? { problem: value } : { change: make(value) };
  switch (draft.kind) {
    case "set-quorum":
      return outcome(whole(1n, rules.maxQuorum, "licenses"), (quorum) => ({ kind: "set-quorum", quorum }));
    case "set-job-timeout":
      return outcome(whole(rules.minJobTimeout, rules.maxJobTimeout, "seconds"), (seconds) => ({ kind: "set-job-timeout", seconds }));
    case "set-liveness-window":
      return outcome(whole(1n, rules.maxLivenessWindow, "seconds"), (seconds) => ({ kind: "set-liveness-window", seconds }));
    case "set-request-fee": {
      if (text === "") return { problem: "Enter the new request fee, in staked tokens." };
      if (!DECIMAL.test(text)) return { problem: "Enter the fee as a number of tokens, like 1.5." };
      if ((text.split(".")[1] ?? "").length > 18) return { problem: "The fee has more than 18 decimals." };
      // Whole tokens → base units (18 decimals): what `setRequestFee` takes.
      const fee = parseUnits(text, 18);
      if (fee > maxUint96) return { problem: `The L2 contract accepts a fee of at most ${formatAmount(maxUint96)} tokens.` };
      return { change: { kind: "set-request-fee", fee } };
    }
    case "accept-admin": {
      const problem = adminHandoverProblem(rules);
      return problem === undefined ? { change: { kind: "accept-admin" } } : { problem };
    }
  }
}

/**
 * Why accepting the admin role would fail on L2, if it would: `acceptDefaultAdminTransfer` succeeds only on
 * a contract whose pending admin is the executor, and the batch fails whole if one call fails.
 */
function adminHandoverProblem(rules: L2Rules): string | undefined {
  const same = (a: Address, b: Address) => a.toLowerCase() === b.toLowerCase();
  const entries = Object.entries(rules.admins) as Array<[keyof GovernedContracts, L2Rules["admins"][keyof GovernedContracts]]>;
  if (entries.every(([, { admin }]) => same(admin, rules.executor)))
    return "Governance already administers the L2 contracts: there is nothing to accept.";
  const notPending = entries.filter(([, { pending }]) => !same(pending, rules.executor)).map(([name]) => name);
  if (notPending.length === 0) return undefined;
  return `${notPending.join(", ")} ${notPending.length === 1 ? "has" : "have"} no admin handover to the governance executor pending: the batch would fail on L2.`;
}

/** Every draft read, and the first problem of the whole set (none, or the same kind twice, included). */
export function readDrafts(
  drafts: readonly ChangeDraft[],
  rules: L2Rules | undefined,
): { changes: ProtocolChange[]; problems: Map<number, string>; blocker?: string } {
  const problems = new Map<number, string>();
  const changes: ProtocolChange[] = [];
  if (drafts.length === 0) return { changes, problems, blocker: "Add a change to propose." };
  if (rules === undefined) return { changes, problems, blocker: "Reading the L2 contracts' present values…" };
  drafts.forEach((draft, index) => {
    const earlier = drafts.findIndex((other) => other.kind === draft.kind);
    if (earlier < index) {
      problems.set(draft.key, `Change ${earlier + 1} already makes this change: keep one.`);
      return;
    }
    const read = readDraft(draft, rules);
    if ("problem" in read) problems.set(draft.key, read.problem);
    else changes.push(read.change);
  });
  const first = drafts.findIndex((draft) => problems.has(draft.key));
  return { changes, problems, blocker: first === -1 ? undefined : `Change ${first + 1}: ${problems.get(drafts[first].key)}` };
}
