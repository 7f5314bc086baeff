// What the governance CLI's arguments mean: the changes a proposal makes, amounts, proposal ids and
// addresses, each refused with an INVALID_INPUT error that says what was expected.
import { readFile } from "node:fs/promises";

import { getAddress, Interface, isAddress, isHexString } from "ethers";
import type { Address, Hex } from "viem";

import { GovernanceError } from "./errors.ts";
import type { L2Call, ProtocolChange } from "@avn/protocol/governance/proposal";

const CHANGES_WITH_VALUE = ["set-quorum", "set-request-fee", "set-job-timeout", "set-liveness-window", "calls"] as const;

/** Reads `name value` pairs (and `accept-admin`, which takes none) into changes. */
export async function parseChanges(words: readonly string[]): Promise<ProtocolChange[]> {
  const changes: ProtocolChange[] = [];
  for (let index = 0; index < words.length; index += 1) {
    const name = words[index];
    if (name === "accept-admin") {
      changes.push({ kind: "accept-admin" });
      continue;
    }
    if (!(CHANGES_WITH_VALUE as readonly string[]).includes(name)) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Unknown change ${JSON.stringify(name)} (known: ${[...CHANGES_WITH_VALUE, "accept-admin"].join(", ")})`,
      );
    }
    const value = words[index + 1];
    if (value === undefined) throw new GovernanceError("INVALID_INPUT", `${name} needs a value`);
    index += 1;
    switch (name) {
      case "set-quorum":
        changes.push({ kind: "set-quorum", quorum: integer(value, name) });
        break;
      case "set-request-fee":
        changes.push({ kind: "set-request-fee", fee: integer(value, name) });
        break;
      case "set-job-timeout":
        changes.push({ kind: "set-job-timeout", seconds: integer(value, name) });
        break;
      case "set-liveness-window":
        changes.push({ kind: "set-liveness-window", seconds: integer(value, name) });
        break;
      case "calls":
        changes.push(...(await rawCalls(value)).map((call) => ({ kind: "call" as const, call })));
        break;
    }
  }
  if (changes.length === 0) throw new GovernanceError("INVALID_INPUT", "Name at least one change: npm run gov -- propose set-quorum 3");
  return changes;
}

/** A non-negative integer, written plainly or in scientific notation (`2e18`, `2.5e18`) as long as it is exact. */
export function integer(text: string, what: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?(?:e(\d+))?$/i.exec(text.trim());
  if (match !== null) {
    const [, whole, fraction = "", exponent = "0"] = match;
    const shift = Number(exponent) - fraction.length;
    if (shift >= 0) return BigInt(whole + fraction) * 10n ** BigInt(shift);
    const digits = BigInt(whole + fraction);
    if (digits % 10n ** BigInt(-shift) === 0n) return digits / 10n ** BigInt(-shift);
  }
  throw new GovernanceError("INVALID_INPUT", `${what} takes a whole number (such as 3 or 2e18), not ${JSON.stringify(text)}`);
}

async function rawCalls(file: string): Promise<L2Call[]> {
  let entries: unknown;
  try {
    entries = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new GovernanceError("INVALID_INPUT", `calls: cannot read ${file} as JSON (${(error as Error).message.split("\n")[0]})`);
  }
  if (!Array.isArray(entries) || entries.length === 0)
    throw new GovernanceError("INVALID_INPUT", `calls: ${file} must hold a non-empty array of calls`);
  return entries.map((entry: Record<string, unknown>, index) => {
    const where = `calls[${index}] of ${file}`;
    if (typeof entry?.target !== "string" || !isAddress(entry.target))
      throw new GovernanceError("INVALID_INPUT", `${where}: target must be an address`);
    // A JSON number above 2^53 has lost digits before we see it: amounts must be strings.
    if (entry.value !== undefined && typeof entry.value !== "string")
      throw new GovernanceError("INVALID_INPUT", `${where}: value must be a string ("1e18"), as JSON numbers lose digits`);
    const value = entry.value === undefined ? 0n : integer(entry.value, `${where}: value`);
    let data: string;
    if (typeof entry.data === "string") {
      if (!isHexString(entry.data, true))
        throw new GovernanceError("INVALID_INPUT", `${where}: data must be 0x-prefixed hex of whole bytes`);
      data = entry.data;
    } else if (typeof entry.signature === "string") {
      try {
        const fragment = new Interface([`function ${entry.signature.replace(/^function\s+/, "")}`]);
        data = fragment.encodeFunctionData(fragment.fragments[0] as never, (entry.args as unknown[] | undefined) ?? []);
      } catch (error) {
        throw new GovernanceError("INVALID_INPUT", `${where}: ${(error as Error).message.split("\n")[0]}`);
      }
    } else {
      throw new GovernanceError("INVALID_INPUT", `${where}: give data, or a signature with its args`);
    }
    return { target: getAddress(entry.target) as Address, value, data: data as Hex };
  });
}

export function proposalId(text: string | undefined): bigint {
  if (text === undefined || !/^\d+$/.test(text))
    throw new GovernanceError("INVALID_INPUT", "Name the proposal by its id (npm run gov -- status lists them)");
  return BigInt(text);
}

export function address(text: string, what: string): string {
  if (!isAddress(text)) throw new GovernanceError("INVALID_INPUT", `${what} must be an address`);
  return getAddress(text);
}
