import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";

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
  await mkdir(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: "a" });
  await new Promise<void>((resolve, reject) => log.once("open", () => resolve()).once("error", reject));
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", path.join(projectRoot, "scripts", "node.ts")], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? "", ...env, NODE_CACHE_DIR: cacheDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      log.end();
      resolve(code);
    }),
  );
  return {
    name,
    cacheDir,
    logFile,
    env,
    child,
    exited,
    logLines: async () => (await readFile(logFile, "utf8")).split("\n").filter((line) => line.length > 0),
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
