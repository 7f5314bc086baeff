import { devnetProvider } from "../devnet/op-devnet.ts";
import type { LocalStack } from "../devnet/local-stack.ts";
import { demoStreams, SteadyLoad, sumTallies } from "./load.ts";
import { descendantsOf, listProcesses, residentMiB, slopePerHour } from "./processes.ts";

export interface SoakOptions {
  minutes: number;
  /** Samples before this minute are the warm-up, left out of the slope. */
  warmUpMinutes: number;
  log(line: string): void;
}

export interface SoakReport {
  answers: { right: number; refused: number; wrong: number; unanswered: number };
  /** Per process: its RSS each minute (MiB) and the slope after the warm-up (MiB per hour). */
  processes: Array<{ name: string; exempt: boolean; samples: number[]; slope?: number }>;
}

// At the demo key's limits (10 tokens a second, an attested answer costs 5): two plain streams every 0.5 s
// (4 tokens/s) and two attested ones every 2 s (5 tokens/s), with a little headroom for timing.
const PLAIN_INTERVAL_MS = 500;
const ATTESTED_INTERVAL_MS = 2_000;

/**
 * `npm run soak`: a steady load at the demo key's limits on both chains, plain and attested, against a
 * started local stack, for `minutes`; every minute each process's resident memory. The two anvil chains
 * keep every block and are reported but exempt from the bar.
 */
export async function soak(local: LocalStack, options: SoakOptions): Promise<SoakReport> {
  const stack = local.stack;
  const api = { url: stack.api!.baseUrl, key: stack.api!.apiKey };
  const l1 = devnetProvider(local.devnet.l1.rpcUrl, local.devnet.l1.chainId);
  const streams = demoStreams(stack, l1);
  const plain = streams.filter((stream) => stream.attested !== true);
  const attested = streams.filter((stream) => stream.attested === true);
  const loads = [new SteadyLoad(api, plain, PLAIN_INTERVAL_MS), new SteadyLoad(api, attested, ATTESTED_INTERVAL_MS)];
  const started = performance.now();
  const names = processNames(local);
  const samples = new Map<string, number[]>();
  const windows = loads.map((load) => load.window());
  try {
    for (const load of loads) load.start();
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
      const { total, right } = sumTallies(windows.map((window) => window.tally()));
      // This process's RSS split: its JavaScript heap (in use, and reserved by V8), and what lives outside it (buffers).
      const { heapUsed, heapTotal, external } = process.memoryUsage();
      const js = `this process's JS heap ${toMiB(heapUsed)} of ${toMiB(heapTotal)} MiB used, ${toMiB(external)} MiB external`;
      options.log(`minute ${minute}: ${total} answers, ${total - right} not right; RSS MiB: ${line.join(", ")}; ${js}`);
    }
  } finally {
    await Promise.all(loads.map((load) => load.stop()));
    for (const window of windows) window.close();
    l1.destroy();
  }
  const { right, refused, wrong, unanswered } = sumTallies(windows.map((window) => window.tally()));
  return {
    answers: { right, refused, wrong, unanswered },
    processes: [...samples].map(([name, list]) => ({
      name,
      exempt: name.startsWith("anvil"),
      samples: list,
      slope: slopePerHour(list.flatMap((mib, minute) => (minute >= options.warmUpMinutes && mib !== undefined ? [{ minute, mib }] : []))),
    })),
  };
}

function toMiB(bytes: number): string {
  return (bytes / 1_048_576).toFixed(0);
}

/** Names for the stack's known processes, by id at the start (a restarted one gets a name by its command). */
function processNames(local: LocalStack): Map<number, string> {
  const names = new Map<number, string>([[process.pid, "stack (this process)"]]);
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
