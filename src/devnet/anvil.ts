import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export interface AnvilOptions {
  chainId: number;
  /** Seconds between blocks; omitted = a block per transaction. */
  blockTime?: number;
  /** With `blockTime`: also mine each transaction at once (a block per transaction plus a block every `blockTime`). */
  mixedMining?: boolean;
  /** Start anvil with OP-stack support (deposit transactions). */
  optimism?: boolean;
  gasLimit?: bigint;
  /**
   * Lift the 24 KiB contract size limit. Only for code coverage runs, whose instrumented contracts are
   * larger than the real ones; a devnet that should behave like the live chains keeps the limit.
   */
  disableCodeSizeLimit?: boolean;
  /**
   * Keep at most this many past states, in memory only (`--prune-history`): reads at older blocks fail. For
   * a chain that mines tens of thousands of blocks at once (a vote's period): measured with anvil 1.7.1,
   * each block mined is slower than the last when every state is kept, and not when a few are.
   */
  pruneHistory?: number;
  /**
   * The hardfork's rules (`--hardfork`, e.g. "cancun"); default: anvil's latest (Prague). Measured with
   * anvil 1.7.1: under Prague's rules each of many empty blocks mined at once (`anvil_mine`) takes longer than
   * the last, some ten times longer than under Cancun's after a few thousand.
   */
  hardfork?: string;
  /** How long to wait for anvil to listen, in milliseconds. */
  startTimeoutMs?: number;
  /**
   * For diagnosis: anvil's log filter (its `RUST_LOG`, e.g. `node=info,backend=trace`, which names each
   * transaction the block builder skips or drops) and a callback for each line anvil prints once it listens.
   */
  log?: { filter: string; onLine: (line: string) => void };
}

export interface AnvilInstance {
  chainId: number;
  rpcUrl: string;
  wsUrl: string;
  port: number;
  /** The child process, for callers that want to know when it exits. */
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Keep only this much of anvil's output for error messages. */
const OUTPUT_TAIL = 4096;
const LISTENING = /Listening on 127\.0\.0\.1:(\d+)/;

/** The anvil binary shipped in the platform package of `@foundry-rs/anvil`. */
function anvilBinary(): string {
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  return require.resolve(`${platformPackage}/bin/anvil`);
}

/**
 * Starts anvil as a child process on a port the operating system picks (`--port 0`, read back from
 * anvil's "Listening on" line, so two chains started at once never race for a port) and resolves once it
 * listens. The child is killed by `stop()` and, should the parent exit without calling it, by an exit
 * hook (a parent killed with SIGKILL cannot run it: anvil then outlives it).
 */
export async function startAnvil(options: AnvilOptions): Promise<AnvilInstance> {
  const args = ["--host", "127.0.0.1", "--port", "0", "--chain-id", String(options.chainId)];
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.mixedMining) args.push("--mixed-mining");
  if (options.optimism) args.push("--optimism");
  if (options.gasLimit !== undefined) args.push("--gas-limit", options.gasLimit.toString());
  if (options.disableCodeSizeLimit) args.push("--disable-code-size-limit");
  if (options.pruneHistory !== undefined) args.push("--prune-history", String(options.pruneHistory));
  if (options.hardfork !== undefined) args.push("--hardfork", options.hardfork);

  const env = options.log === undefined ? process.env : { ...process.env, RUST_LOG: options.log.filter, NO_COLOR: "1" };
  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"], env });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));

  const port = await waitForListening(child, options.startTimeoutMs ?? 20_000);
  if (options.log !== undefined) forwardLines(child, options.log.onLine);
  return {
    chainId: options.chainId,
    rpcUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () => stopChild(child),
  };
}

function waitForListening(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`anvil did not start within ${timeoutMs} ms: ${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_TAIL);
      const listening = LISTENING.exec(output);
      if (listening !== null) {
        cleanup();
        resolve(Number(listening[1]));
      }
    };
    const onExit = (code: number | null) => fail(new Error(`anvil exited with code ${code} before listening: ${output}`));
    const onError = (error: Error) => fail(new Error(`anvil could not be started: ${error.message}`));
    const fail = (error: Error) => {
      cleanup();
      child.kill("SIGKILL");
      reject(error);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", onError);
      // Keep draining output so that a full pipe never blocks anvil, and keep an error listener so that
      // a later process error is not an unhandled event.
      child.stdout?.resume();
      child.stderr?.resume();
      child.on("error", () => undefined);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", onError);
  });
}

/** Calls `onLine` with each whole line of the child's output (stdout and stderr, each split on its own). */
function forwardLines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    let partial = "";
    stream?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") onLine(line);
    });
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
