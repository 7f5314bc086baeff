import { readdir, readFile } from "node:fs/promises";

/** A process of the stack: its id and its parent's, its command name and arguments. */
export interface ProcessInfo {
  pid: number;
  parent: number;
  command: string;
  args: string[];
}

/** Every process now (Linux `/proc`); those that exit while it is read are left out. */
export async function listProcesses(): Promise<ProcessInfo[]> {
  const found: ProcessInfo[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const [stat, cmdline] = await Promise.all([
      readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined),
      readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => undefined),
    ]);
    if (stat === undefined || cmdline === undefined) continue;
    // "pid (command) state ppid …": the command may hold spaces and parentheses, so split after the last ")".
    const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    found.push({ pid: Number(entry), parent, command, args: cmdline.split("\0").filter((arg) => arg.length > 0) });
  }
  return found;
}

/** The processes descending from `root` (children, their children, …). */
export function descendantsOf(root: number, processes: readonly ProcessInfo[]): ProcessInfo[] {
  const below: ProcessInfo[] = [];
  let frontier = new Set([root]);
  while (frontier.size > 0) {
    const next = processes.filter((process) => frontier.has(process.parent));
    below.push(...next);
    frontier = new Set(next.map((process) => process.pid));
  }
  return below;
}

/** The children of `pid` now (the API cluster's workers). */
export async function childrenOf(pid: number): Promise<number[]> {
  return (await listProcesses()).filter((process) => process.parent === pid).map((process) => process.pid);
}

/** A process's resident memory in MiB (`VmRSS`), or undefined once it has exited. */
export async function residentMiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => undefined);
  const match = status === undefined ? null : /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match === null ? undefined : Number(match[1]) / 1024;
}

/** The least-squares slope of `points` (minutes, MiB) in MiB per hour; undefined with fewer than two. */
export function slopePerHour(points: ReadonlyArray<{ minute: number; mib: number }>): number | undefined {
  if (points.length < 2) return undefined;
  const n = points.length;
  const meanX = points.reduce((sum, point) => sum + point.minute, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.mib, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += (point.minute - meanX) * (point.mib - meanY);
    variance += (point.minute - meanX) ** 2;
  }
  return variance === 0 ? undefined : (covariance / variance) * 60;
}

/**
 * Where a process's resident memory lives (Linux `/proc/<pid>/smaps`), in MiB: the C allocator's main heap
 * (`[heap]`, grown by brk: what native code and Node's own buffers allocate from the main thread), anonymous
 * mappings (V8's heap, thread arenas, large allocations) and mapped files (code). What tells a native leak or
 * fragmentation from V8's heap when the JS heap in use stays flat.
 */
export async function residentByKind(pid: number): Promise<{ brkHeap: number; anonymous: number; files: number } | undefined> {
  const smaps = await readFile(`/proc/${pid}/smaps`, "utf8").catch(() => undefined);
  if (smaps === undefined) return undefined;
  const kb = { brkHeap: 0, anonymous: 0, files: 0 };
  let kind: keyof typeof kb = "anonymous";
  for (const line of smaps.split("\n")) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const name = mapping[1];
      kind = name === "[heap]" ? "brkHeap" : name.startsWith("/") ? "files" : "anonymous";
    } else if (line.startsWith("Rss:")) kb[kind] += Number(line.split(/\s+/)[1]);
  }
  return { brkHeap: kb.brkHeap / 1024, anonymous: kb.anonymous / 1024, files: kb.files / 1024 };
}
