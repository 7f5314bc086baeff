import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";

/** The API running as its own process (`scripts/api.ts`, as `npm run api` runs it): a cluster when `API_WORKERS` > 1. */
export interface ApiServiceProcess {
  url: string;
  logFile: string;
  /** SIGTERM: the workers finish their requests and write their usage; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `scripts/api.ts` with `env` (src/api/config.ts; `API_PORT` must be set) on the loopback
 * interface, its output appended to `logFile`, and resolves once it answers `/healthz`. A process that
 * exits first, or does not answer within `startTimeoutMs`, is an error naming its log file.
 */
export async function spawnApiService(options: {
  projectRoot: string;
  env: Record<string, string>;
  logFile: string;
  startTimeoutMs?: number;
}): Promise<ApiServiceProcess> {
  const { projectRoot, env, logFile } = options;
  if (env.API_PORT === undefined) throw new Error("spawnApiService needs API_PORT");
  await mkdir(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile, { flags: "a" });
  await new Promise<void>((resolve, reject) => log.once("open", () => resolve()).once("error", reject));
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", path.join(projectRoot, "scripts", "api.ts")], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? "", API_HOST: "127.0.0.1", ...env },
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
  const url = `http://127.0.0.1:${env.API_PORT}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    const up = await fetch(`${url}/healthz`, { headers: { connection: "close" } }).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return { url, logFile, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the API did not start on ${url}; see ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
