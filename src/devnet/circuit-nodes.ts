import type { ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";

import { spawnScript } from "./script-process.ts";

/** A circuit node running as its own process (`scripts/node.ts`), as an operator would run it. */
export interface CircuitNodeProcess {
  name: string;
  cacheDir: string;
  logFile: string;
  env: Record<string, string>;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  /** The log lines written so far (pino JSON, one per line). */
  logLines(): Promise<string[]>;
  /** SIGTERM (graceful) or SIGKILL (crash); resolves when the process is gone. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
}

/**
 * Starts `scripts/node.ts` with `env` (see src/node/config.ts), its output appended to `logFile`. Node 22
 * runs the TypeScript directly, the same way the container does.
 */
export async function spawnCircuitNode(
  projectRoot: string,
  name: string,
  cacheDir: string,
  logFile: string,
  env: Record<string, string>,
): Promise<CircuitNodeProcess> {
  const script = await spawnScript({ projectRoot, script: "node.ts", env: { ...env, NODE_CACHE_DIR: cacheDir }, logFile });
  return {
    name,
    cacheDir,
    logFile,
    env,
    child: script.child,
    exited: script.exited,
    logLines: async () => (await readFile(logFile, "utf8")).split("\n").filter((line) => line.length > 0),
    async stop(signal = "SIGTERM") {
      await script.stop(signal);
    },
  };
}
