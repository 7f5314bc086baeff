import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";

import { freePort } from "../../src/common/free-port.ts";
import { redisServerInstalled } from "../../src/devnet/redis-server.ts";
import type { RequiredService } from "./services.ts";

/** What `startRedis` needs, for `requireService(this, REDIS)` when it returns undefined. */
export const REDIS: RequiredService = {
  name: "redis-server",
  missing: "not installed",
  install: "apt-get install redis-server",
};

/** A throwaway redis-server on a free port (the local stack's own), or undefined when the machine has none. */
export { startRedisServer as startRedis } from "../../src/devnet/redis-server.ts";

/** A redis-server a test can take away and bring back, on one port, so clients reconnect to the same URL. */
export interface ControllableRedis {
  url: string;
  port: number;
  /** SIGKILL (an outage, not a shutdown); resolves once the process has exited, so its port refuses connections. */
  kill(): Promise<void>;
  /** A new redis-server on the same port, empty (nothing is saved); resolves once it accepts connections. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open and commands are taken, never answered (a peer that hangs). */
  pause(): void;
  /** SIGCONT: it answers what it was sent meanwhile. */
  resume(): void;
  /** Kills whatever runs (paused or not) and resolves when it has exited; safe to call more than once. */
  stop(): Promise<void>;
}

/**
 * A redis-server on a free loopback port that `kill`, `restart`, `pause` and `resume` control, or undefined
 * when the machine has none. A process that exits without stopping it kills it.
 */
export async function startControllableRedis(): Promise<ControllableRedis | undefined> {
  if (!redisServerInstalled()) return undefined;
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const killOnExit = () => child?.kill("SIGKILL");
  process.on("exit", killOnExit);
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const kill = async () => {
    if (running()) child!.kill("SIGKILL"); // a stopped process dies of SIGKILL too
    await exited;
  };
  const launch = async () => {
    const started = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    child = started;
    exited = new Promise<void>((resolve) => started.once("exit", () => resolve()));
    // Ready when it accepts a connection (polled: redis-server says nothing else when it is).
    for (const deadline = Date.now() + 10_000; !(await accepts(port));) {
      if (!running() || Date.now() > deadline) {
        await kill();
        throw new Error(`redis-server did not start on port ${port}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    async restart() {
      await kill();
      await launch();
    },
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    async stop() {
      await kill();
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
