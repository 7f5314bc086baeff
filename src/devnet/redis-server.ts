import { spawn, spawnSync } from "node:child_process";
import { connect } from "node:net";

import { freePort } from "../common/free-port.ts";

/** A redis-server of its own: nothing saved to disk, gone when stopped. */
export interface RedisServer {
  url: string;
  /** SIGTERM; resolves when the process has exited. */
  stop(): Promise<void>;
}

/** Whether Debian's `redis-server` (or another on PATH) can be run here. */
export function redisServerInstalled(): boolean {
  return spawnSync("redis-server", ["--version"]).status === 0;
}

/**
 * A throwaway redis-server on a free loopback port, resolved once it accepts connections, or undefined
 * when the machine has none (`apt-get install redis-server`). Used by the local stack (the API's
 * processes share attestation rounds and rate limits through it) and by the tests. A process that exits
 * without stopping it kills it.
 */
export async function startRedisServer(): Promise<RedisServer | undefined> {
  if (!redisServerInstalled()) return undefined;
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    process.off("exit", killOnExit);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  // It listens within milliseconds; a connection attempt is the readiness signal (no fixed sleep).
  for (const deadline = Date.now() + 10_000; ;) {
    if (await accepts(port)) return { url: `redis://127.0.0.1:${port}`, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.end();
      resolve(true);
    }).on("error", () => resolve(false));
  });
}
