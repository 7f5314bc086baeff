import { describe, expect, it } from "vitest";

import { amountText, readAmount, type AmountRules } from "../src/lib/amounts";

const TOKEN: AmountRules = { decimals: 18 };
const E18 = 10n ** 18n;

describe("readAmount", () => {
  it("reads nothing from an empty field: not yet a mistake", () => {
    expect(readAmount("", TOKEN)).toEqual({});
    expect(readAmount("   ", TOKEN)).toEqual({});
  });

  it("reads whole units into base units with the token's decimals", () => {
    expect(readAmount("12.5", TOKEN)).toEqual({ value: 125n * 10n ** 17n });
    expect(readAmount(" 300 ", TOKEN)).toEqual({ value: 300n * E18 });
    expect(readAmount(".5", TOKEN)).toEqual({ value: 5n * 10n ** 17n });
    // Half-typed: the dot is there, the decimals not yet.
    expect(readAmount("1.", TOKEN)).toEqual({ value: E18 });
    expect(readAmount("0.000000000000000001", TOKEN)).toEqual({ value: 1n });
    expect(readAmount("1.5", { decimals: 6 })).toEqual({ value: 1_500_000n });
    expect(readAmount("5000", { decimals: 0 })).toEqual({ value: 5000n });
  });

  it("refuses what is not a plain positive decimal, which parseUnits alone would take or throw on", () => {
    for (const text of ["1e3", "-1", "1,5", "0x10", "1.2.3", ".", "abc", "+1", "1 000"]) {
      expect(readAmount(text, TOKEN), text).toEqual({ error: "Enter the amount as a number, like 1.5." });
    }
    expect(readAmount("1.5", { decimals: 0 })).toEqual({ error: "Enter a whole number." });
    expect(readAmount("12x", { decimals: 0 })).toEqual({ error: "Enter a whole number." });
  });

  it("refuses more decimals than the token has, even zeros, instead of rounding them away", () => {
    expect(readAmount("0.0000000000000000001", TOKEN)).toEqual({ error: "The amount has more than 18 decimals." });
    expect(readAmount("1.0000000000000000000", TOKEN)).toEqual({ error: "The amount has more than 18 decimals." });
    expect(readAmount("1.1234567", { decimals: 6 })).toEqual({ error: "The amount has more than 6 decimals." });
    expect(readAmount("1.123456", { decimals: 6 })).toEqual({ value: 1_123_456n });
  });

  it("refuses zero", () => {
    for (const text of ["0", "0.0", "000", ".0"]) expect(readAmount(text, TOKEN), text).toEqual({ error: "Enter an amount above zero." });
  });

  it("takes the balance exactly and refuses one base unit more, in the form's words", () => {
    const rules: AmountRules = { decimals: 18, max: 10n * E18, aboveMax: "You hold 10 primary tokens." };
    expect(readAmount("10", rules)).toEqual({ value: 10n * E18 });
    expect(readAmount("10.000000000000000001", rules)).toEqual({ error: "You hold 10 primary tokens." });
    expect(readAmount("11", { decimals: 18, max: 10n * E18 })).toEqual({ error: "The amount is more than your balance." });
    // A malformed amount says so, whatever the balance.
    expect(readAmount("0", rules)).toEqual({ error: "Enter an amount above zero." });
  });

  it("refuses an amount off the step, and says one sentence for every malformed amount when the form gives one", () => {
    const credits: AmountRules = {
      decimals: 0,
      malformed: "Enter a whole number of credits.",
      step: { size: 100n, message: "Credits are sold in multiples of 100." },
    };
    expect(readAmount("5000", credits)).toEqual({ value: 5000n });
    expect(readAmount("5050", credits)).toEqual({ error: "Credits are sold in multiples of 100." });
    for (const text of ["0", "12.5", "ten"]) expect(readAmount(text, credits), text).toEqual({ error: "Enter a whole number of credits." });
  });
});

describe("amountText (what Max fills in)", () => {
  it("reads back as exactly the balance, every decimal kept", () => {
    for (const balance of [1n, E18, 123_456_789_012_345_678_901_234n, 10n ** 30n + 1n]) {
      const text = amountText(balance, 18);
      expect(readAmount(text, { decimals: 18, max: balance }), text).toEqual({ value: balance });
    }
    expect(amountText(1n, 18)).toBe("0.000000000000000001");
    expect(amountText(2_500n, 0)).toBe("2500");
  });
});
