import { parseUnits } from "viem";

/**
 * Reads a token amount typed in whole units ("12.5", 18 decimals): its value in base units, nothing for
 * an empty field (not yet a mistake), or a sentence saying what is wrong. Plain positive decimals only:
 * parseUnits would also take forms like "1e3" that nobody means as an amount.
 */
export function parseTokenAmount(text: string): { value?: bigint; error?: string } {
  const trimmed = text.trim();
  if (trimmed === "") return {};
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) return { error: "Enter the amount as a number, like 1.5." };
  if ((trimmed.split(".")[1] ?? "").length > 18) return { error: "The amount has more than 18 decimals." };
  const value = parseUnits(trimmed, 18);
  return value === 0n ? { error: "Enter an amount above zero." } : { value };
}
