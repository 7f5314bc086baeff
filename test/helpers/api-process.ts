import { spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";

import { freePort } from "../../src/common/free-port.ts";
import type { SourceFixtures } from "../../src/devnet/source-chains.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

export interface RunningApiProcess {
  port: number;
  /** The process's id (a cluster's primary). */
  pid: number;
  /** Whether it has exited. */
  readonly exited: boolean;
  /** Its standard output, one entry per line (pino's JSON when LOG_LEVEL lets it log). */
  logs: string[];
  /**
   * Resolves once `accept` holds for the lines logged so far: checked at once, then as each line comes.
   * Rejects after `timeoutMs` (the failure names `what` and shows the last lines) or when the process exits first.
   */
  waitForLogs(what: string, accept: (lines: readonly string[]) => boolean, timeoutMs: number): Promise<void>;
  /** SIGTERM, as an orchestrator stops it: finish, write usage, exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, as a crash: nothing is finished or written; resolves once it is gone. */
  kill(): Promise<void>;
}

/**
 * `scripts/api.ts` as `npm run api` runs it, over `sources`, on a free port, resolved once it answers
 * `/healthz` and, for a cluster (`API_WORKERS` other than 1), once its primary says every worker listens.
 * `env` comes over the defaults (one worker, silent logs). A process that does not start in a minute (a
 * loaded machine starts Node processes slowly) is killed, so its open pipe cannot keep the tests alive.
 */
export async function spawnApiProcess(sources: SourceFixtures, env: Record<string, string> = {}): Promise<RunningApiProcess> {
  const port = await freePort();
  const logs: string[] = [];
  const settings = { API_WORKERS: "1", LOG_LEVEL: "silent", ...env };
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "scripts/api.ts"], {
    cwd: projectRoot,
    env: {
      ...process.env,
      API_PORT: String(port),
      EVM_RPC_URLS: sources.anvil.rpcUrl,
      SOLANA_RPC_URLS: sources.solanaRpc.url,
      ...settings,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  // Whole lines, however the pipe's chunks cut them; each one told to the waits of waitForLogs.
  const logged = new EventEmitter<{ line: []; exit: [] }>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line === "") return;
    logs.push(line);
    logged.emit("line");
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      logged.emit("exit");
      resolve(code);
    }),
  );
  const waitForLogs = async (what: string, accept: (lines: readonly string[]) => boolean, timeoutMs: number) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const ended = () => child.exitCode !== null || child.signalCode !== null;
    try {
      while (!accept(logs)) {
        if (ended()) throw new Error(`the API process exited before ${what}`);
        await Promise.race([once(logged, "line", { signal }), once(logged, "exit", { signal })]);
      }
    } catch (error) {
      if (!signal.aborted) throw error;
      throw new Error(`no ${what} within ${timeoutMs} ms; the last lines:\n${logs.slice(-10).join("\n")}`, { cause: error });
    }
  };
  const waitsForCluster = settings.API_WORKERS !== "1";
  const deadline = Date.now() + 60_000;
  for (;;) {
    // /healthz needs no key: the process has seen no key when a test's first keyed request arrives.
    const up = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: "close" } }).then(
      (response) => response.ok,
      () => false,
    );
    if (up && (!waitsForCluster || logs.some((line) => line.includes("worker processes")))) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`the API on port ${port} did not start`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    pid: child.pid!,
    get exited() {
      return child.exitCode !== null || child.signalCode !== null;
    },
    logs,
    waitForLogs,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/**
 * One POST of the sources' ERC-20 holding with `key`, on a connection of its own (no keep-alive agent), so
 * a cluster's primary hands each request to the next worker.
 */
export function postOnOwnConnection(
  sources: SourceFixtures,
  port: number,
  key: string,
  path = "/api/ccq-evm",
): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 });
    const request = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent: false,
        headers: { authorization: key, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, body: text, retryAfter: response.headers["retry-after"] }));
      },
    );
    request.on("error", reject).end(body);
  });
}

/**
 * The worker processes of a cluster that answered its requests to `url` (at least `count` of them), each with the
 * statuses it answered, from its logs: Fastify's "incoming request" line names the url and its "request completed"
 * line the status, both under the request's id, which counts per process. Waits (up to 10 s) for the `count` lines:
 * a worker logs "request completed" after its answer has gone.
 */
export async function workersThatAnswered(
  api: Pick<RunningApiProcess, "logs" | "waitForLogs">,
  url: string,
  count: number,
): Promise<Map<number | undefined, number[]>> {
  interface Line {
    pid?: number;
    reqId?: string;
    msg?: string;
    req?: { url?: string };
    res?: { statusCode?: number };
  }
  const answers = (lines: readonly string[]) => {
    const entries = lines.map((line) => JSON.parse(line) as Line);
    const asked = new Set(
      entries.filter((entry) => entry.msg === "incoming request" && entry.req?.url === url).map((entry) => `${entry.pid}/${entry.reqId}`),
    );
    return entries.filter((entry) => entry.msg === "request completed" && asked.has(`${entry.pid}/${entry.reqId}`));
  };
  await api.waitForLogs(`${count} answers to ${url} logged`, (lines) => answers(lines).length >= count, 10_000);
  const byWorker = new Map<number | undefined, number[]>();
  for (const entry of answers(api.logs)) byWorker.set(entry.pid, [...(byWorker.get(entry.pid) ?? []), entry.res?.statusCode ?? 0]);
  return byWorker;
}

/**
 * The worker processes (pids) that answered `count` refusals (429) of a cluster, from its logs. A worker logs
 * "request completed" after its answer has gone, so this waits (up to 10 s) for the `count` lines before
 * counting; the refusals are counted because the /healthz probes log the line too.
 */
export async function workersThatRefused(
  api: Pick<RunningApiProcess, "logs" | "waitForLogs">,
  count: number,
): Promise<Set<number | undefined>> {
  const refused = (lines: readonly string[]) =>
    lines
      .map((line) => JSON.parse(line) as { pid?: number; msg?: string; res?: { statusCode?: number } })
      .filter((line) => line.msg === "request completed" && line.res?.statusCode === 429);
  await api.waitForLogs(`${count} refusals logged`, (lines) => refused(lines).length >= count, 10_000);
  return new Set(refused(api.logs).map((line) => line.pid));
}
