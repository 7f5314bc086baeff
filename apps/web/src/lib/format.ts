import { formatUnits } from "viem";

/**
 * A token amount in whole units, with up to `digits` decimals (cut, never rounded up), grouped for reading.
 * A negative amount keeps its sign ("-0.5"), unless nothing of it is shown ("0").
 */
export function formatAmount(value: bigint, decimals = 18, digits = 4): string {
  const [whole, fraction = ""] = formatUnits(value < 0n ? -value : value, decimals).split(".");
  const grouped = BigInt(whole).toLocaleString("en-US");
  const trimmed = fraction.slice(0, digits).replace(/0+$/, "");
  const text = trimmed === "" ? grouped : `${grouped}.${trimmed}`;
  return value < 0n && text !== "0" ? `-${text}` : text;
}

/** A duration in seconds as "2 d 3 h", "5 min 10 s" or "42 s". */
export function formatDuration(seconds: bigint | number): string {
  let left = Number(seconds);
  if (left <= 0) return "0 s";
  const parts: string[] = [];
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["min", 60],
    ["s", 1],
  ] as const) {
    const count = Math.floor(left / size);
    if (count > 0) parts.push(`${count} ${unit}`);
    left -= count * size;
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

/** A rate scaled by 1e18 (the staked token's redemption rate) as a percentage ("87.5 %"). */
export function formatRate(rate: bigint): string {
  return `${(Number(rate / 10n ** 12n) / 1e4).toLocaleString("en-US", { maximumFractionDigits: 2 })} %`;
}

/** Basis points (10,000 is the whole; a non-negative integer) as a percentage with two decimals, exactly ("95.00 %", "0.07 %"). */
export function formatBps(bps: number): string {
  return `${Math.floor(bps / 100).toLocaleString("en-US")}.${String(bps % 100).padStart(2, "0")} %`;
}

/**
 * A license's challenge jobs (the network's benchmark, docs/verification.md): those answered of those asked,
 * and its median delay on them ("3 / 4 (median delay 2 blocks)"; "None asked").
 */
export function formatChallenges(answered: number, asked: number, medianDelayBlocks: number): string {
  if (asked === 0) return "None asked";
  const delay = `${medianDelayBlocks.toLocaleString("en-US")} ${medianDelayBlocks === 1 ? "block" : "blocks"}`;
  return `${answered.toLocaleString("en-US")} / ${asked.toLocaleString("en-US")} (median delay ${delay})`;
}

/** An address or a hash as `0x1234…abcd`: the first four and the last four digits (HexLink shows them so). */
export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** A unix time in seconds as a local date and time. */
export function formatTime(seconds: bigint | number): string {
  return new Date(Number(seconds) * 1000).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
}
