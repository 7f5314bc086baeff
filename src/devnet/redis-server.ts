import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { connect } from "node:net";

import { freePort } from "../common/free-port.ts";

/**
 * A redis-server of its own: nothing saved to disk, gone when stopped. It can also be taken away and
 * brought back on the same port (clients reconnect to the same URL): what the tests and `npm run chaos`
 * do to it.
 */
export interface RedisServer {
  url: string;
  port: number;
  /** SIGTERM (paused or not); resolves when the process has exited. Safe to call more than once. */
  stop(): Promise<void>;
  /** SIGKILL (an outage, not a shutdown); resolves once the process has exited, so its port refuses connections. */
  kill(): Promise<void>;
  /** A new redis-server on the same port, empty (nothing is saved); resolves once it accepts connections. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open and commands are taken, never answered (a peer that hangs). */
  pause(): void;
  /** SIGCONT: it answers what it was sent meanwhile. */
  resume(): void;
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
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const killOnExit = () => child?.kill("SIGKILL");
  process.on("exit", killOnExit);
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const end = async (signal: NodeJS.Signals) => {
    if (running()) {
      child!.kill(signal);
      if (signal !== "SIGKILL") child!.kill("SIGCONT"); // a paused process handles SIGTERM once resumed
    }
    await exited;
  };
  const launch = async () => {
    const started = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    child = started;
    exited = new Promise<void>((resolve) => started.once("exit", () => resolve()));
    // It listens within milliseconds; a connection attempt is the readiness signal (no fixed sleep).
    for (const deadline = Date.now() + 10_000; !(await accepts(port));) {
      if (!running() || Date.now() > deadline) {
        await end("SIGKILL");
        throw new Error(`redis-server did not start on port ${port}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => end("SIGKILL"),
    async restart() {
      await end("SIGKILL");
      await launch();
    },
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    async stop() {
      await end("SIGTERM");
      process.off("exit", killOnExit);
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.end();
      resolve(true);
    }).on("error", () => resolve(false));
  });
}
