// Why a call to a governed L2 contract would revert, named by the contracts' own custom errors (a
// proposal is checked against the L2 before it is made, so its author reads the reason, not hex).
import { Interface, type InterfaceAbi } from "ethers";

import { abiOf } from "../common/artifacts.ts";
import { describeError } from "../common/describe-error.ts";

// The governed contracts' errors, to name the reason an L2 call would revert.
let protocolErrors: Interface | undefined;
function protocolErrorsInterface(): Interface {
  if (protocolErrors === undefined) {
    const errors = new Map<string, unknown>();
    for (const name of ["StakedToken", "NodeLicense", "NodeRegistry", "VerificationRegistry"]) {
      for (const item of abiOf(name) as Array<{ type: string; name: string; inputs: Array<{ type: string }> }>) {
        if (item.type === "error") errors.set(`${item.name}(${item.inputs.map((input) => input.type).join(",")})`, item);
      }
    }
    protocolErrors = new Interface([...errors.values()] as InterfaceAbi);
  }
  return protocolErrors;
}

/** The governed contracts' error a failed call reverted with, if it is one of theirs. */
export function decodedRevert(error: unknown) {
  const data =
    (error as { data?: unknown; info?: { error?: { data?: unknown } } }).data ??
    (error as { info?: { error?: { data?: unknown } } }).info?.error?.data;
  if (typeof data !== "string" || data.length < 10) return undefined;
  try {
    return protocolErrorsInterface().parseError(data) ?? undefined;
  } catch {
    return undefined;
  }
}

export function revertReason(error: unknown): string {
  const parsed = decodedRevert(error);
  return parsed === undefined ? describeError(error) : `${parsed.name}(${parsed.args.join(", ")})`;
}
