export { formatVotes } from "@avn/protocol/governance/rules";

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
