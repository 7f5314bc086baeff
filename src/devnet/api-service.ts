import { freePort } from "../common/free-port.ts";
import { spawnScript } from "./script-process.ts";

/** The API running as its own process (`scripts/api.ts`, as `npm run api` runs it): a cluster when `API_WORKERS` > 1. */
export interface ApiServiceProcess {
  url: string;
  port: number;
  /** The process's id (the API itself, or a cluster's primary). */
  pid: number;
  /** Where its output goes, when it was given one. */
  logFile?: string;
  /** SIGTERM: the workers finish their requests and write their usage; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<number | null>;
}

/**
 * Starts `scripts/api.ts` with `env` (src/api/config.ts) on the loopback interface, on `env.API_PORT` or
 * a free port, its output appended to `logFile` (else its errors to this process's), and resolves once it
 * answers `/healthz`. A process that exits first, or does not answer within `startTimeoutMs`, is an error
 * (naming its log file).
 */
export async function spawnApiService(options: {
  projectRoot: string;
  env: Record<string, string>;
  logFile?: string;
  startTimeoutMs?: number;
}): Promise<ApiServiceProcess> {
  const { projectRoot, logFile } = options;
  const port = options.env.API_PORT === undefined || options.env.API_PORT === "0" ? await freePort() : Number(options.env.API_PORT);
  const api = await spawnScript({
    projectRoot,
    script: "api.ts",
    env: { API_HOST: "127.0.0.1", ...options.env, API_PORT: String(port) },
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    const up = await fetch(`${url}/healthz`, { headers: { connection: "close" } }).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return { url, port, pid: api.child.pid!, logFile, stop: () => api.stop(), kill: () => api.stop("SIGKILL") };
    if (api.child.exitCode !== null || Date.now() > deadline) {
      await api.stop("SIGKILL");
      throw new Error(`the API did not start on ${url}${logFile === undefined ? "" : `; see ${logFile}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
