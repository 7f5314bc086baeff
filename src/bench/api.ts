import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import autocannon from "autocannon";
import { getAddress, hexlify, randomBytes } from "ethers";
import Fastify from "fastify";

import { apiWorkerCount, loadApiConfig } from "../api/config.ts";
import { ApiKeys } from "../api/keys/api-keys.ts";
import { startApi, type RunningApi } from "../api/main.ts";
import { spawnApiService } from "../devnet/api-service.ts";
import { startSourceFixtures, type SourceFixtures } from "../devnet/source-chains.ts";

export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

async function load(
  label: string,
  url: string,
  body: string,
  headers: Record<string, string>,
  durationSeconds: number,
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    connections: 32,
    workers: 1, // the load generator on its own thread, not the server's event loop
    duration: durationSeconds,
  });
  return { label, requestsPerSecond: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx };
}

/** Rounds of the interleaved comparison. */
const LOAD_ROUNDS = 5;

/**
 * Loads each target for `secondsPerRound` in turn, `rounds` times over, and sums per target: requests
 * per second over all its rounds, the median round's p50 and the worst round's p99.
 */
async function interleavedLoad(
  targets: Array<{ label: string; url: string; body: string; headers: Record<string, string> }>,
  rounds: number,
  secondsPerRound: number,
): Promise<LoadResult[]> {
  const runs = targets.map((): LoadResult[] => []);
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, target] of targets.entries())
      runs[index].push(await load(target.label, target.url, target.body, target.headers, secondsPerRound));
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return targets.map((target, index) => ({
    label: target.label,
    requestsPerSecond: runs[index].reduce((sum, run) => sum + run.requestsPerSecond, 0) / rounds,
    p50Ms: median(runs[index].map((run) => run.p50Ms)),
    p99Ms: Math.max(...runs[index].map((run) => run.p99Ms)),
    non2xx: runs[index].reduce((sum, run) => sum + run.non2xx, 0),
  }));
}

async function upstreamRequests(api: RunningApi, chain: string): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(new RegExp(`api_upstream_requests_total\\{chain="${chain}",outcome="\\w+"\\} (\\d+)`, "g")))
    total += Number(match[1]);
  return total;
}

/**
 * The API under load on local source chains, side by side in one run: the ccq-evm route answering from
 * its cache beside a bare Fastify route returning the same JSON; 1,000 concurrent distinct queries and
 * the upstream HTTP requests they cost; the ccq-svm route with and without its cache; one ccq-evm batch
 * of 100 distinct queries and the upstream HTTP requests it costs; the cached ccq-evm route of `npm run api`
 * with its default worker count (one process per core).
 */
export async function benchmarkApi(durationSeconds = 5): Promise<{
  load: LoadResult[];
  burst: { queries: number; upstreamRequests: number; ms: number };
  batch: { items: number; upstreamRequests: number; ms: number };
}> {
  const sources: SourceFixtures = await startSourceFixtures();
  const dir = await mkdtemp(path.join(tmpdir(), "bench-api-"));
  const database = path.join(dir, "keys.sqlite");
  const store = await ApiKeys.open(database);
  const { key } = await store.create("bench");
  await store.close();
  const config = (cacheTtlMs: number) =>
    loadApiConfig({
      API_PORT: "0",
      EVM_RPC_URLS: sources.anvil.rpcUrl,
      SOLANA_RPC_URLS: sources.solanaRpc.url,
      API_KEYS_DB: database,
      RATE_LIMIT_CAPACITY: "1000000000",
      RATE_LIMIT_REFILL_PER_SECOND: "1000000000",
      CACHE_TTL_MS: String(cacheTtlMs),
      LOG_LEVEL: "silent",
    });
  const cached = await startApi(config(600_000));
  const uncached = await startApi(config(0));
  const bare = Fastify();
  try {
    const auth = { authorization: key };
    const evmBody = JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 });
    const svmBody = JSON.stringify({ owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint });
    const sample = await (
      await fetch(`${cached.url}/api/ccq-evm`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: evmBody })
    ).text();
    bare.post("/bare", async (_request, reply) => reply.type("application/json").send(sample));
    const bareUrl = await bare.listen({ port: 0, host: "127.0.0.1" });

    // Each server's hot path is compiled by the JIT before it is measured: a second of unmeasured load
    // on every route, so the first route measured is not the only one that pays for warming up.
    const warmUp = Math.min(2, durationSeconds);
    await load("warm-up", `${cached.url}/api/ccq-evm`, evmBody, auth, warmUp);
    await load("warm-up", `${cached.url}/api/ccq-svm`, svmBody, auth, warmUp);
    await load("warm-up", `${bareUrl}/bare`, evmBody, {}, warmUp);
    // The three routes compared are measured in interleaved rounds (evm, bare, svm, evm, bare, svm, …)
    // and summed: throughput on this shared machine drifts by a quarter within seconds, and a drift
    // then lands on every route alike instead of on whichever was measured during it.
    const results: LoadResult[] = await interleavedLoad(
      [
        { label: "ccq-evm, cached result", url: `${cached.url}/api/ccq-evm`, body: evmBody, headers: auth },
        { label: "bare Fastify route, same JSON", url: `${bareUrl}/bare`, body: evmBody, headers: {} },
        { label: "ccq-svm, cached result", url: `${cached.url}/api/ccq-svm`, body: svmBody, headers: auth },
      ],
      LOAD_ROUNDS,
      // Twice the single routes' time in all (2 s rounds by default): a round much shorter than that is
      // mostly autocannon starting its worker and opening connections.
      (2 * durationSeconds) / LOAD_ROUNDS,
    );
    results.push(await load("ccq-svm, no cache (2 upstream reads each)", `${uncached.url}/api/ccq-svm`, svmBody, auth, durationSeconds));

    // `npm run api` as an operator starts it: API_WORKERS unset, so one worker per core on one port.
    const workers = apiWorkerCount(config(600_000));
    const clustered = await spawnApiProcess({
      EVM_RPC_URLS: sources.anvil.rpcUrl,
      SOLANA_RPC_URLS: sources.solanaRpc.url,
      API_KEYS_DB: database,
      RATE_LIMIT_CAPACITY: "1000000000",
      RATE_LIMIT_REFILL_PER_SECOND: "1000000000",
      CACHE_TTL_MS: "600000",
      LOG_LEVEL: "silent",
    });
    try {
      await load("warm-up", `${clustered.url}/api/ccq-evm`, evmBody, auth, warmUp);
      results.push(
        await load(
          `ccq-evm, cached result, npm run api with ${workers} workers`,
          `${clustered.url}/api/ccq-evm`,
          evmBody,
          auth,
          durationSeconds,
        ),
      );
    } finally {
      await clustered.stop();
    }

    // The burst comes from another process, so that the client's work does not slow the server's
    // event loop (in one process, requests would trickle in and batch poorly).
    const before = await upstreamRequests(uncached, "evm");
    const owners = Array.from({ length: 1_000 }, () => getAddress(hexlify(randomBytes(20))));
    const { ms, statuses } = await burstFromChildProcess(`${uncached.url}/api/ccq-evm`, key, sources.evm.erc20, owners);
    if (statuses.some((status) => status !== 200)) throw new Error("the burst got non-200 answers");
    const answers = statuses;
    const burst = { queries: answers.length, upstreamRequests: (await upstreamRequests(uncached, "evm")) - before, ms };

    // One batch of 100 distinct queries (fresh owners: nothing cached) once the head read above has
    // expired (1 s), so its count includes the block-number read: the whole cost of a batch.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const beforeBatch = await upstreamRequests(uncached, "evm");
    const items = Array.from({ length: 100 }, () => ({
      user_address: getAddress(hexlify(randomBytes(20))),
      contract_address: sources.evm.erc20,
    }));
    const started = performance.now();
    const response = await fetch(`${uncached.url}/api/ccq-evm/batch`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(items),
    });
    const answer = (await response.json()) as { data?: { results?: Array<{ status: number }> } };
    const batchMs = performance.now() - started;
    const entries = answer.data?.results ?? [];
    if (response.status !== 200 || entries.length !== items.length || entries.some((entry) => entry.status !== 200)) {
      throw new Error("the batch got non-200 answers");
    }
    const batch = { items: entries.length, upstreamRequests: (await upstreamRequests(uncached, "evm")) - beforeBatch, ms: batchMs };
    return { load: results, burst, batch };
  } finally {
    await bare.close();
    await cached.close();
    await uncached.close();
    await sources.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** `scripts/api.ts` in a process of its own (as `npm run api` starts it, one worker per core) on a free port, once it answers. */
async function spawnApiProcess(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const api = await spawnApiService({ projectRoot: path.resolve(import.meta.dirname, "..", ".."), env });
  return { url: api.url, stop: async () => void (await api.stop()) };
}

/** Sends one ccq-evm query per owner, all at once, from a child Node process; returns statuses and wall time. */
async function burstFromChildProcess(
  url: string,
  key: string,
  asset: string,
  owners: string[],
): Promise<{ ms: number; statuses: number[] }> {
  const program = `
    const { url, key, asset, owners } = JSON.parse(process.env.BENCH_BURST);
    const started = performance.now();
    const statuses = await Promise.all(owners.map((owner) => fetch(url, {
      method: "POST",
      headers: { authorization: key, "content-type": "application/json" },
      body: JSON.stringify({ user_address: owner, contract_address: asset }),
    }).then((response) => response.status)));
    console.log(JSON.stringify({ ms: performance.now() - started, statuses }));
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", program], {
    // In the environment, not the command line: `ps` shows command lines, and this carries an API key.
    env: { ...process.env, BENCH_BURST: JSON.stringify({ url, key, asset, owners }) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`the burst process exited with ${code}`);
  return JSON.parse(output) as { ms: number; statuses: number[] };
}
