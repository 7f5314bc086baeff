import { describe, expect, it } from "vitest";

import { formatAmount, formatBps, formatChallenges, formatDuration, formatRate, formatTime, shortAddress } from "../src/lib/format";

const E18 = 10n ** 18n;

describe("formatAmount", () => {
  it("groups the whole part and keeps up to four decimals, cut rather than rounded", () => {
    expect(formatAmount(1_234_567n * E18)).toBe("1,234,567");
    expect(formatAmount(15n * 10n ** 17n)).toBe("1.5");
    expect(formatAmount(199_999n * 10n ** 13n)).toBe("1.9999");
    expect(formatAmount(0n)).toBe("0");
    // Below the fourth decimal: shown as 0, never as a rounded-up 0.0001.
    expect(formatAmount(99_999_999_999_999n)).toBe("0");
  });

  it("keeps a negative amount's sign, which the whole part alone would lose below one unit", () => {
    expect(formatAmount(-15n * 10n ** 17n)).toBe("-1.5");
    expect(formatAmount(-5n * 10n ** 17n)).toBe("-0.5");
    expect(formatAmount(-1_234_567n * E18)).toBe("-1,234,567");
    // Nothing shown of it: no "-0".
    expect(formatAmount(-1n)).toBe("0");
  });

  it("takes other decimals and digits", () => {
    expect(formatAmount(1_500_000n, 6)).toBe("1.5");
    expect(formatAmount(123_456_789n, 6, 6)).toBe("123.456789");
    expect(formatAmount(12_345n, 0)).toBe("12,345");
    expect(formatAmount(1n, 18, 18)).toBe("0.000000000000000001");
  });
});

describe("formatDuration", () => {
  it("says at most the two largest units", () => {
    expect(formatDuration(42)).toBe("42 s");
    expect(formatDuration(60)).toBe("1 min");
    expect(formatDuration(61)).toBe("1 min 1 s");
    expect(formatDuration(3_661)).toBe("1 h 1 min");
    expect(formatDuration(90_061)).toBe("1 d 1 h");
    expect(formatDuration(86_400 + 59)).toBe("1 d 59 s");
    expect(formatDuration(3_600n)).toBe("1 h");
  });

  it("says 0 s for nothing and for the past", () => {
    expect(formatDuration(0)).toBe("0 s");
    expect(formatDuration(-5)).toBe("0 s");
    expect(formatDuration(-1n)).toBe("0 s");
  });
});

describe("formatRate", () => {
  it("reads a 1e18-scaled rate as a percentage with up to two decimals", () => {
    expect(formatRate(875n * 10n ** 15n)).toBe("87.5 %");
    expect(formatRate(E18)).toBe("100 %");
    expect(formatRate(123_456_789_012_345_678n)).toBe("12.35 %");
    expect(formatRate(0n)).toBe("0 %");
  });
});

describe("formatBps", () => {
  it("reads basis points as a percentage with exactly two decimals", () => {
    expect(formatBps(10_000)).toBe("100.00 %");
    expect(formatBps(9_500)).toBe("95.00 %");
    expect(formatBps(9_999)).toBe("99.99 %");
    expect(formatBps(7)).toBe("0.07 %");
    expect(formatBps(50)).toBe("0.50 %");
    expect(formatBps(0)).toBe("0.00 %");
  });
});

describe("formatChallenges", () => {
  it("says the challenges answered of those asked with the median delay, or that none was asked", () => {
    expect(formatChallenges(3, 4, 2)).toBe("3 / 4 (median delay 2 blocks)");
    expect(formatChallenges(1, 1, 1)).toBe("1 / 1 (median delay 1 block)");
    expect(formatChallenges(0, 2, 0)).toBe("0 / 2 (median delay 0 blocks)");
    expect(formatChallenges(0, 0, 0)).toBe("None asked");
  });
});

describe("shortAddress and formatTime", () => {
  it("shortens an address to its first and last digits", () => {
    expect(shortAddress("0x1234567890abcdef1234567890abcdef12345678")).toBe("0x1234…5678");
    // A transaction hash the same way.
    expect(shortAddress(`0xabcdef${"0".repeat(54)}9876`)).toBe("0xabcd…9876");
  });

  it("writes a unix time as a date and time (UTC here: vitest.config.ts sets TZ)", () => {
    expect(formatTime(0)).toBe("1 Jan 1970, 00:00:00");
    expect(formatTime(1_700_000_001n)).toBe("14 Nov 2023, 22:13:21");
  });
});
