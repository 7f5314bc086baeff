import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";

const require = createRequire(import.meta.url);

export interface AnvilOptions {
  chainId: number;
  /** Seconds between blocks; omitted = a block per transaction. */
  blockTime?: number;
  /** Start anvil with OP-stack support (deposit transactions). */
  optimism?: boolean;
  gasLimit?: bigint;
  /** How long to wait for anvil to listen, in milliseconds. */
  startTimeoutMs?: number;
}

export interface AnvilInstance {
  chainId: number;
  rpcUrl: string;
  wsUrl: string;
  port: number;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1, chosen by the operating system. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** The anvil binary shipped in the platform package of `@foundry-rs/anvil`. */
function anvilBinary(): string {
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
  return require.resolve(`${platformPackage}/bin/anvil`);
}

/**
 * Starts anvil as a child process on a free localhost port and resolves once it accepts connections.
 * The process is killed with the parent (stdio pipes close) and by `stop()`.
 */
export async function startAnvil(options: AnvilOptions): Promise<AnvilInstance> {
  const port = await freePort();
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(options.chainId)];
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.optimism) args.push("--optimism");
  if (options.gasLimit !== undefined) args.push("--gas-limit", options.gasLimit.toString());

  const child = spawn(anvilBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
  await waitForListening(child, options.startTimeoutMs ?? 20_000);
  return {
    chainId: options.chainId,
    rpcUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    stop: () => stopChild(child),
  };
}

function waitForListening(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`anvil did not start within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Listening on")) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null) => fail(new Error(`anvil exited with code ${code} before listening: ${output.slice(-500)}`));
    const fail = (error: Error) => {
      cleanup();
      child.kill("SIGKILL");
      reject(error);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      // Keep draining output so that a full pipe never blocks anvil.
      child.stdout?.resume();
      child.stderr?.resume();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });
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
