import { formatUnits, parseUnits } from "viem";

/** What an amount field accepts, and what it says when it does not. */
export interface AmountRules {
  /** The token's decimals: 18 for ETH and the protocol's tokens, 0 for whole units such as credits. */
  decimals: number;
  /** The most the amount may be, in base units (the balance), once known. */
  max?: bigint;
  /** The sentence for an amount above `max`. */
  aboveMax?: string;
  /** A size the amount must be a multiple of (base units), and the sentence when it is not. */
  step?: { size: bigint; message: string };
  /** One sentence for every malformed amount (not a number, too many decimals, zero), instead of the three below. */
  malformed?: string;
}

/** An amount as typed, read: its value, what is wrong with it, or neither (an empty field is not yet a mistake). */
export type AmountReading =
  { value: bigint; error?: undefined } | { value?: undefined; error: string } | { value?: undefined; error?: undefined };

/** Plain positive decimals only: parseUnits would also take forms like "1e3" or "-1" that nobody means as an amount. */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/**
 * Reads an amount typed in whole units ("12.5") with the token's decimals: its value in base units, or the
 * sentence that says what is wrong (not a number, more decimals than the token has, zero, above `max`, not a
 * multiple of `step`), or nothing for an empty field.
 */
export function readAmount(text: string, rules: AmountRules): AmountReading {
  const trimmed = text.trim();
  if (trimmed === "") return {};
  const whole = rules.decimals === 0;
  if (!DECIMAL.test(trimmed))
    return { error: rules.malformed ?? (whole ? "Enter a whole number." : "Enter the amount as a number, like 1.5.") };
  // "1.50" has two decimals whatever their value; a half-typed "1." has none.
  if ((trimmed.split(".")[1] ?? "").length > rules.decimals) {
    return { error: rules.malformed ?? (whole ? "Enter a whole number." : `The amount has more than ${rules.decimals} decimals.`) };
  }
  const value = parseUnits(trimmed, rules.decimals);
  if (value === 0n) return { error: rules.malformed ?? "Enter an amount above zero." };
  if (rules.max !== undefined && value > rules.max) return { error: rules.aboveMax ?? "The amount is more than your balance." };
  if (rules.step !== undefined && value % rules.step.size !== 0n) return { error: rules.step.message };
  return { value };
}

/** `max` base units as the field shows them: every decimal kept, so that reading the text back gives `max` exactly. */
export function amountText(max: bigint, decimals: number): string {
  return formatUnits(max, decimals);
}
