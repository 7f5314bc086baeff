import { spawn, spawnSync } from "node:child_process";
import { createServer, connect } from "node:net";

import type { RequiredService } from "./services.ts";

/** What `startRedis` needs, for `requireService(this, REDIS)` when it returns undefined. */
export const REDIS: RequiredService = {
  name: "redis-server",
  missing: "not installed",
  install: "apt-get install redis-server",
};

/** A throwaway redis-server on a free port, or undefined when the machine has no redis-server. */
export async function startRedis(): Promise<{ url: string; stop(): Promise<void> } | undefined> {
  if (spawnSync("redis-server", ["--version"]).status !== 0) return undefined;
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      }).on("error", () => resolve(false));
    });
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off("exit", killOnExit);
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
