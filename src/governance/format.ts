import { formatUnits } from "ethers";

/** Votes as people count them: one per whole token (the token has 18 decimals), grouped by thousands. */
export function formatVotes(votes: bigint): string {
  const [whole, fraction = ""] = formatUnits(votes, 18).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const trimmed = fraction.replace(/0+$/, "");
  return trimmed === "" ? grouped : `${grouped}.${trimmed}`;
}

/** A wait in the unit people think of it in. */
export function formatDuration(seconds: number): string {
  if (seconds < 120) return `${Math.max(0, Math.round(seconds))} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3_600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

/** `count` blocks and about how long they take. */
export function formatBlocks(count: bigint, blockSeconds: number): string {
  return `${count} block${count === 1n ? "" : "s"} (~${formatDuration(Number(count) * blockSeconds)})`;
}
