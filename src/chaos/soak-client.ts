import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";

import type { StackFile } from "../common/stack-file.ts";
import { devnetProvider } from "../devnet/op-devnet.ts";
import { demoStreams, SteadyLoad, sumTallies, type Tally } from "./load.ts";

// At the demo key's limits (10 tokens a second, an attested answer costs 5): two plain streams every 0.5 s
// (4 tokens/s) and two attested ones every 2 s (5 tokens/s), with a little headroom for timing.
const PLAIN_INTERVAL_MS = 500;
const ATTESTED_INTERVAL_MS = 2_000;

/** What the soak asks its client over IPC. */
type SoakClientRequest = { type: "tally" } | { type: "stop" };

/** What the client answers: the answers it judged so far (all of them once stopped) and its own memory. */
export interface SoakClientReport {
  type: "ready" | "tally" | "stopped";
  tally: Tally;
  memory: NodeJS.MemoryUsage;
}

/**
 * In the client's own process (`scripts/soak-client.ts`): the soak's load on `stack`'s demo holdings, answering
 * the soak's requests over IPC (`channel`, this process) until told to stop, or until the soak's process is
 * gone (the IPC channel closes), and then stopping too. The load runs apart from the stack so that the stack's
 * memory figures are the stack's: the client's own allocations (fetch, the reads that judge each answer) are
 * reported as its own.
 */
export async function serveSoakClient(stack: StackFile, channel: NodeJS.Process): Promise<void> {
  if (stack.api === undefined || stack.l1 === undefined || stack.demo === undefined) {
    throw new Error("the stack file names no API, L1 or demo holdings: the soak needs the local stack's");
  }
  const l1 = devnetProvider(stack.l1.rpcUrl, stack.l1.chainId);
  const api = { url: stack.api.baseUrl, key: stack.api.apiKey };
  const streams = demoStreams(stack, l1);
  const loads = [
    new SteadyLoad(
      api,
      streams.filter((stream) => stream.attested !== true),
      PLAIN_INTERVAL_MS,
    ),
    new SteadyLoad(
      api,
      streams.filter((stream) => stream.attested === true),
      ATTESTED_INTERVAL_MS,
    ),
  ];
  const windows = loads.map((load) => load.window());
  const report = (type: SoakClientReport["type"]): SoakClientReport => ({
    type,
    tally: sumTallies(windows.map((window) => window.tally())),
    memory: process.memoryUsage(),
  });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await Promise.all(loads.map((load) => load.stop()));
      for (const window of windows) window.close();
      l1.destroy();
    })());
  channel.on("message", (message: SoakClientRequest) => {
    if (message.type === "tally") channel.send!(report("tally"));
    if (message.type === "stop") {
      void stop().then(() => {
        channel.send!(report("stopped"));
        channel.disconnect();
      });
    }
  });
  channel.once("disconnect", () => void stop());
  for (const load of loads) load.start();
  channel.send!(report("ready"));
}

/** In the soak's process: the client as a child process of its own, asked over IPC. */
export class SoakClientProcess {
  readonly #child: ChildProcess;
  readonly #ended: Promise<[number | null, NodeJS.Signals | null]>;
  readonly #exited: Promise<never>;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#ended = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    this.#exited = this.#ended.then(([code, signal]) => {
      throw new Error(`the soak client exited (${String(signal ?? code)})`);
    });
    this.#exited.catch(() => undefined); // read only while a request waits
  }

  /** Starts `scripts/soak-client.ts` of `projectRoot` on the stack `stackFile` names; resolves once its load runs. */
  static async start(projectRoot: string, stackFile: string): Promise<SoakClientProcess> {
    const child = fork(path.join(projectRoot, "scripts", "soak-client.ts"), [stackFile], {
      cwd: projectRoot,
      execArgv: ["--disable-warning=ExperimentalWarning"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const client = new SoakClientProcess(child);
    await client.#next("ready");
    return client;
  }

  get pid(): number {
    return this.#child.pid!;
  }

  /** What the client has judged so far, and its memory now. */
  tally(): Promise<SoakClientReport> {
    return this.#ask({ type: "tally" }, "tally");
  }

  /** Stops the load (the requests in flight are judged) and returns the full tally; the client then exits. */
  async stop(): Promise<SoakClientReport> {
    const report = await this.#ask({ type: "stop" }, "stopped");
    await this.#ended;
    return report;
  }

  /** Kills the client if it still runs (the soak failed before it could stop it). */
  kill(): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill();
  }

  #ask(request: SoakClientRequest, answer: SoakClientReport["type"]): Promise<SoakClientReport> {
    const next = this.#next(answer);
    this.#child.send(request);
    return next;
  }

  async #next(type: SoakClientReport["type"]): Promise<SoakClientReport> {
    for (;;) {
      const [message] = (await Promise.race([once(this.#child, "message"), this.#exited])) as [SoakClientReport];
      if (message.type === type) return message;
    }
  }
}
