import {
  decodeErrorResult,
  decodeEventLog,
  decodeFunctionData,
  getAbiItem,
  type Abi,
  type AbiEvent,
  type AbiFunction,
  type AbiParameter,
  type Hex,
  type Log,
} from "viem";

import { ALL_ABIS } from "./abis";

/** A decoded argument: its name (or its position) and type from the ABI, and its value. */
export interface DecodedArgument {
  name: string;
  type: string;
  value: unknown;
}

/** A decoded call, event or error: its name, its full signature and its arguments in ABI order. */
export interface Decoded {
  name: string;
  signature: string;
  args: DecodedArgument[];
}

/** A parameter as Solidity writes it: `address indexed owner`, `(uint256 id, bytes data)[] items`. */
function parameterText(parameter: AbiParameter & { indexed?: boolean }): string {
  const components = (parameter as { components?: readonly AbiParameter[] }).components;
  const type =
    parameter.type.startsWith("tuple") && components !== undefined
      ? `(${components.map(parameterText).join(", ")})${parameter.type.slice("tuple".length)}`
      : parameter.type;
  return [type, parameter.indexed === true ? "indexed" : "", parameter.name ?? ""].filter((part) => part !== "").join(" ");
}

/** An ABI item's full signature, as a block explorer shows it: `function f(address owner) returns (uint256 id)`. */
function formatAbiItem(item: { type: string; name?: string; inputs?: readonly AbiParameter[]; outputs?: readonly AbiParameter[] }): string {
  const outputs =
    item.type === "function" && item.outputs !== undefined && item.outputs.length > 0
      ? ` returns (${item.outputs.map(parameterText).join(", ")})`
      : "";
  return `${item.type} ${item.name ?? ""}(${(item.inputs ?? []).map(parameterText).join(", ")})${outputs}`;
}

/** `abi` first (the contract's own, when known), then every ABI the explorer knows. */
function candidates(abi: Abi | undefined): readonly Abi[] {
  return abi === undefined ? ALL_ABIS : [abi, ...ALL_ABIS];
}

function argumentsOf(inputs: readonly AbiParameter[], values: unknown): DecodedArgument[] {
  // viem returns an array for calls and errors; for events an object keyed by name when every input is named.
  const list = Array.isArray(values)
    ? (values as unknown[])
    : inputs.map((input, index) => (values as Record<string, unknown> | undefined)?.[input.name ?? String(index)]);
  return inputs.map((input, index) => ({ name: input.name || `#${index}`, type: input.type, value: list[index] }));
}

/**
 * A transaction's input decoded by its selector: with `abi` (the target's, when the explorer knows the
 * contract) first, then with the project's, the OP Bedrock contracts' and the standard tokens' ABIs.
 * Undefined for an empty input (a plain transfer) or a selector none of them has.
 */
export function decodeInput(data: Hex, abi?: Abi): Decoded | undefined {
  if (data.length < 10) return undefined;
  for (const candidate of candidates(abi)) {
    try {
      const { functionName, args } = decodeFunctionData({ abi: candidate, data });
      const item = getAbiItem({ abi: candidate, name: functionName, args: args }) as AbiFunction | undefined;
      if (item === undefined) continue;
      return { name: functionName, signature: formatAbiItem(item), args: argumentsOf(item.inputs, args ?? []) };
    } catch {
      // Not this ABI's: try the next.
    }
  }
  return undefined;
}

/**
 * A log decoded by its topic: with `abi` first, then every known ABI. An event whose indexed arguments
 * differ (ERC-20's and ERC-721's `Transfer`) decodes with the ABI whose layout fits the log.
 */
export function decodeLog(log: Pick<Log, "data" | "topics">, abi?: Abi): Decoded | undefined {
  if (log.topics.length === 0) return undefined;
  for (const candidate of candidates(abi)) {
    try {
      const decoded = decodeEventLog({ abi: candidate, data: log.data, topics: log.topics, strict: true });
      const item = candidate.find(
        (entry): entry is AbiEvent => entry.type === "event" && entry.name === decoded.eventName && matchesLayout(entry, log.topics.length),
      );
      if (item === undefined) continue;
      return { name: decoded.eventName!, signature: formatAbiItem(item), args: argumentsOf(item.inputs, decoded.args) };
    } catch {
      // Not this ABI's (or not its layout): try the next.
    }
  }
  return undefined;
}

function matchesLayout(event: AbiEvent, topics: number): boolean {
  return event.inputs.filter((input) => input.indexed === true).length + (event.anonymous === true ? 0 : 1) === topics;
}

/**
 * Revert data decoded: a custom error of any known ABI by name and arguments, `Error(string)` as its reason,
 * `Panic(uint256)` with its code. Undefined for empty data (a revert without reason) or an unknown selector.
 */
export function decodeRevert(data: Hex | undefined, abi?: Abi): Decoded | undefined {
  if (data === undefined || data.length < 10) return undefined;
  for (const candidate of candidates(abi)) {
    try {
      const { errorName, args, abiItem } = decodeErrorResult({ abi: candidate, data });
      const inputs = (abiItem as { inputs?: readonly AbiParameter[] }).inputs ?? [];
      return {
        name: errorName,
        signature: formatAbiItem(abiItem),
        args: argumentsOf(inputs, args ?? []),
      };
    } catch {
      // Not this ABI's: try the next.
    }
  }
  return undefined;
}

/** A decoded value as text: integers in full, byte strings and addresses as hex, lists and structs spelled out. */
export function valueText(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(valueText).join(", ")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.entries(value)
      .map(([key, inner]) => `${key}: ${valueText(inner)}`)
      .join(", ")}}`;
  return String(value);
}

/** `Name(arg, arg)` in one line, as the revert reason reads on the page ("NodeRegistry_NotLicenseOwner(3, 0x…)"). */
export function decodedText(decoded: Decoded): string {
  return `${decoded.name}(${decoded.args.map((arg) => valueText(arg.value)).join(", ")})`;
}
