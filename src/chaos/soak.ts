import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";

import type { LocalStack } from "../devnet/local-stack.ts";
import { SoakClientProcess, type SoakClientReport } from "./soak-client.ts";
import { descendantsOf, listProcesses, residentByKind, residentMiB, slopePerHour } from "./processes.ts";

export interface SoakOptions {
  minutes: number;
  /** Samples before this minute are the warm-up, left out of the slope. */
  warmUpMinutes: number;
  /** The project whose `scripts/soak-client.ts` runs the load. */
  projectRoot: string;
  log(line: string): void;
}

export interface SoakReport {
  answers: { right: number; refused: number; wrong: number; unanswered: number };
  /** Per process: its RSS each minute (MiB) and the slope after the warm-up (MiB per hour). */
  processes: Array<{ name: string; exempt: boolean; samples: number[]; slope?: number }>;
}

/**
 * `npm run soak`: a steady load at the demo key's limits on both chains, plain and attested, against a
 * started local stack, for `minutes`; every minute each process's resident memory. The load runs in a
 * process of its own (`soak-client.ts`), reported beside the stack's but exempt: it is the measuring
 * client, not the stack. The two anvil chains keep every block and are reported but exempt from the bar.
 */
export async function soak(local: LocalStack, options: SoakOptions): Promise<SoakReport> {
  const started = performance.now();
  const client = await SoakClientProcess.start(options.projectRoot, local.stackFile);
  const names = processNames(local, client.pid);
  const samples = new Map<string, number[]>();
  let report: SoakClientReport;
  try {
    for (let minute = 0; minute <= options.minutes; minute++) {
      if (minute > 0) await new Promise((resolve) => setTimeout(resolve, started + minute * 60_000 - performance.now()));
      const line: string[] = [];
      for (const { name, pid } of await stackProcesses(names)) {
        const mib = await residentMiB(pid);
        if (mib === undefined) continue;
        const list = samples.get(name) ?? [];
        list[minute] = mib;
        samples.set(name, list);
        line.push(`${name} ${mib.toFixed(0)}`);
      }
      const { tally, memory } = await client.tally();
      // The two Node processes' RSS split: the JavaScript heap (in use, and reserved by V8) and what lives
      // outside it (buffers), to tell a growing heap from native memory.
      const kinds = await residentByKind(process.pid);
      const stackKinds =
        kinds === undefined
          ? ""
          : `; stack RSS by kind MiB: [heap] ${kinds.brkHeap.toFixed(0)}, anonymous ${kinds.anonymous.toFixed(0)}, files ${kinds.files.toFixed(0)}`;
      const heaps = `JS heap used/reserved/external MiB: stack ${heapOf(process.memoryUsage())}, soak client ${heapOf(memory)}${stackKinds}; stack V8 spaces MiB: ${spacesOf()}; ${outsideSpaces()}`;
      options.log(
        `minute ${minute}: ${tally.total} answers, ${tally.total - tally.right} not right; RSS MiB: ${line.join(", ")}; ${heaps}`,
      );
    }
  } finally {
    report = await client.stop().catch((error: unknown) => {
      client.kill();
      throw error;
    });
  }
  const { right, refused, wrong, unanswered } = report.tally;
  return {
    answers: { right, refused, wrong, unanswered },
    processes: [...samples].map(([name, list]) => ({
      name,
      exempt: name.startsWith("anvil") || name === SOAK_CLIENT,
      samples: list,
      slope: slopePerHour(list.flatMap((mib, minute) => (minute >= options.warmUpMinutes && mib !== undefined ? [{ minute, mib }] : []))),
    })),
  };
}

const SOAK_CLIENT = "soak client";

function heapOf({ heapUsed, heapTotal, external }: NodeJS.MemoryUsage): string {
  return [heapUsed, heapTotal, external].map(toMiB).join("/");
}

/**
 * The size V8 holds for each of its heap's spaces (`space_size`: committed, used or not): tells a young
 * generation sizing itself up (new space) from old objects accumulating or code being compiled.
 */
function spacesOf(): string {
  const names: Record<string, string> = {
    new_space: "new",
    old_space: "old",
    code_space: "code",
    large_object_space: "large",
    new_large_object_space: "new large",
  };
  return getHeapSpaceStatistics()
    .filter((space) => names[space.space_name] !== undefined)
    .map((space) => `${names[space.space_name]} ${toMiB(space.space_size)}`)
    .join(", ");
}

/**
 * The stack process's memory that the spaces do not show: the heap's pages V8 has touched
 * (`total_physical_size`), what V8 itself has malloced (compiler zones, tables) and the array buffers' bytes:
 * which of them follows the anonymous memory when it grows while every space is flat.
 */
function outsideSpaces(): string {
  const statistics = getHeapStatistics();
  const physical = toMiB(statistics.total_physical_size);
  const malloced = toMiB(statistics.malloced_memory);
  return `stack V8 physical/malloced/array buffers MiB: ${physical}/${malloced}/${toMiB(process.memoryUsage().arrayBuffers)}`;
}

function toMiB(bytes: number): string {
  return (bytes / 1_048_576).toFixed(0);
}

/** Names for the stack's known processes, by id at the start (a restarted one gets a name by its command). */
function processNames(local: LocalStack, clientPid: number): Map<number, string> {
  const names = new Map<number, string>([
    [process.pid, "stack (this process)"],
    [clientPid, SOAK_CLIENT],
  ]);
  names.set(local.devnet.l1.node.process.pid!, "anvil L1");
  names.set(local.devnet.l2.node.process.pid!, "anvil L2");
  for (const [index, node] of (local.network?.nodes ?? []).entries()) names.set(node.child.pid!, `node ${index + 1}`);
  if (local.stack.api !== undefined && local.network !== undefined) names.set(local.network.api.pid, "api primary");
  if (local.stack.solver !== undefined) names.set(local.stack.solver.pid, "solver");
  if (local.stack.challenger !== undefined) names.set(local.stack.challenger.pid, "challenger");
  return names;
}

/** The stack's processes now (this one and its descendants), each with a stable name. */
async function stackProcesses(names: Map<number, string>): Promise<Array<{ name: string; pid: number }>> {
  const processes = await listProcesses();
  const ours = [{ pid: process.pid, parent: 0, command: "node", args: [] }, ...descendantsOf(process.pid, processes)];
  const apiPrimary = [...names].find(([, name]) => name === "api primary")?.[0];
  let worker = 0;
  return ours.map(({ pid, parent, command }) => {
    const known = names.get(pid);
    if (known !== undefined) return { name: known, pid };
    if (parent === apiPrimary) return { name: `api worker ${++worker}`, pid };
    return { name: `${command} ${pid}`, pid };
  });
}
