import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import path from "node:path";

import { address, getAddressDecoder } from "@solana/kit";

import { getAddress, hexlify, randomBytes } from "ethers";

import { AttestationVerifier__factory } from "../../typechain-types/index.ts";

import { attestationFromJson } from "../common/attestation.ts";

import { balanceKind } from "@avn/protocol/attestation-kinds";

import { spawnApiService } from "../devnet/api-service.ts";

import { spawnCircuitNode, type CircuitNodeProcess } from "../devnet/circuit-nodes.ts";

import { startRedisServer } from "../devnet/redis-server.ts";

import type { VerificationNetwork } from "../devnet/verification-network.ts";

import { withBenchNetwork } from "./bench-network.ts";

import { summarize, type TimingSummary } from "./bridge-timing.ts";

import { measureConditionLatency } from "./condition-latency.ts";

export interface AttestBenchResult {
  timings: TimingSummary[];
  /** Answers checked with the deployed AttestationVerifier's isAttestationValid. */
  verifiedOnChain: number;
  /** Throughput of attested answers for each way of running the hub (one process, workers, instances on Redis). */
  scaleOut: ScaleOutRow[];
}

/** One way of running the API and its hub, loaded with concurrent distinct attested queries. */
export interface ScaleOutRow {
  configuration: string;
  answers: number;
  answersPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  /** Answers other than 200 with a quorum (must be 0). */
  failures: number;
  /** Each failure's status and message (or the transport error), counted. */
  failureReasons?: Record<string, number>;
  /** Or why the row could not be measured (no redis-server on the machine). */
  skipped?: string;
}

type Query = { path: "/api/ccq-evm" | "/api/ccq-svm"; body: Record<string, string> };

/**
 * On a fresh devnet with the verification network of `npm start` (three circuit nodes connected to the
 * API's hub, quorum 2): `queries` distinct attested queries (half Ethereum, half Solana: fresh owners of
 * the demo tokens, so no cache anywhere answers them) sent one after another, timed from request to
 * answer; the same with one node killed (SIGKILL); and the same queries unattested, for comparison.
 * Every attested answer must be a 200 with a quorum; one per chain and phase is checked on-chain. With
 * the three nodes, also `conditionQueries` fresh verdicts of 1, 4 and 16 leaves each, signed and unsigned
 * (POST /api/conditions), one signed verdict per size checked on-chain.
 */
export async function measureAttestedLatency(options: {
  queries: number;
  projectRoot: string;
  /** Verdicts per condition size and kind (signed, unsigned); default `queries`. */
  conditionQueries?: number;
  /** Attested queries per scale-out configuration, and how many are in flight at once. */
  scaleOutQueries?: number;
  concurrency?: number;
  log?: (line: string) => void;
}): Promise<AttestBenchResult> {
  const log = options.log ?? (() => undefined);
  // Latency is measured, not the demo key's rate limit (60 burst, 10/s).
  const apiEnv = { RATE_LIMIT_CAPACITY: "1000000", RATE_LIMIT_REFILL_PER_SECOND: "1000000" };
  return withBenchNetwork(
    { name: "attest", projectRoot: options.projectRoot, apiEnv, onProgress: log },
    async ({ l2, contracts, network }) => {
      const verifier = AttestationVerifier__factory.connect(contracts.AttestationVerifier, l2);
      const { api, apiKey, evmDemo, svmDemo } = network;
      const ask = async (query: Query, attest: boolean) => {
        const started = performance.now();
        const response = await fetch(`${api.url}${query.path}${attest ? "?attest=true" : ""}`, {
          method: "POST",
          headers: { authorization: apiKey, "content-type": "application/json" },
          body: JSON.stringify(query.body),
        });
        const text = await response.text();
        const ms = performance.now() - started;
        if (response.status !== 200) throw new Error(`${query.path}${attest ? "?attest=true" : ""} answered ${response.status}: ${text}`);
        return { ms, attestation: attest ? (JSON.parse(text) as { data: { attestation: AttestationJson } }).data.attestation : undefined };
      };
      const distinctQueries = (count: number): Query[] =>
        Array.from({ length: count }, (_, index): Query =>
          index % 2 === 0
            ? { path: "/api/ccq-evm", body: { user_address: getAddress(hexlify(randomBytes(20))), contract_address: evmDemo.erc20 } }
            : {
                path: "/api/ccq-svm",
                body: { owner_address: address(getAddressDecoder().decode(randomBytes(32))), token_mint_address: svmDemo.splMint },
              },
        );
      let verifiedOnChain = 0;
      const run = async (label: string, attest: boolean) => {
        const samples: Record<string, number[]> = { "/api/ccq-evm": [], "/api/ccq-svm": [] };
        const checked = new Set<string>();
        for (const query of distinctQueries(options.queries)) {
          const { ms, attestation } = await ask(query, attest);
          samples[query.path].push(ms);
          if (attestation !== undefined && !checked.has(query.path)) {
            checked.add(query.path);
            const { attestation: struct, signatures } = attestationFromJson(balanceKind, attestation);
            if (!(await verifier.isAttestationValid(struct, signatures, 3_600n)))
              throw new Error(`the deployed verifier refused an attested ${query.path} answer`);
            verifiedOnChain += 1;
          }
        }
        const all = [...samples["/api/ccq-evm"], ...samples["/api/ccq-svm"]];
        return [
          summarize(`${label}, both chains`, all),
          summarize(`${label}, ccq-evm`, samples["/api/ccq-evm"]),
          summarize(`${label}, ccq-svm`, samples["/api/ccq-svm"]),
        ];
      };

      log(`Warming up, then ${options.queries} distinct attested queries with three nodes…`);
      for (const query of distinctQueries(10)) await ask(query, true);
      const timings = [...(await run("attested, 3 nodes", true)), ...(await run("unattested, same kind of queries", false))];
      log(`${options.conditionQueries ?? options.queries} fresh verdicts of 1, 4 and 16 leaves each, signed and unsigned…`);
      const verdicts = await measureConditionLatency({
        queries: options.conditionQueries ?? options.queries,
        ask: async (route, body, attest) => {
          const started = performance.now();
          const response = await fetch(`${api.url}${route}${attest ? "?attest=true" : ""}`, {
            method: "POST",
            headers: { authorization: apiKey, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          const text = await response.text();
          if (response.status !== 200) throw new Error(`${route}${attest ? "?attest=true" : ""} answered ${response.status}: ${text}`);
          return { ms: performance.now() - started, text };
        },
        evm: evmDemo,
        svm: svmDemo,
        l2ChainId: (await l2.getNetwork()).chainId,
        verifier,
      });
      timings.push(...verdicts.timings);
      verifiedOnChain += verdicts.verifiedOnChain;
      log("Killing one node (SIGKILL)…");
      await network.nodes[2].stop("SIGKILL");
      timings.push(...(await run("attested, 2 nodes (one killed)", true)));
      const scaleOut = await measureScaleOut(network, contracts, {
        projectRoot: options.projectRoot,
        queries: options.scaleOutQueries ?? 200,
        concurrency: options.concurrency ?? 4,
        queriesOf: distinctQueries,
        log,
      });
      return { timings, verifiedOnChain, scaleOut };
    },
  );
}

/** An API process (`scripts/api.ts`, as `npm run api` runs it) of the scale-out bench. */
interface ApiProcess {
  port: number;
  stop(): Promise<void>;
}

/**
 * The hub run three ways over the same devnet, each loaded with `queries` distinct attested queries,
 * `concurrency` in flight: one API process; one with two workers (rounds through the primary); three
 * processes on one Redis, one node connected to each (every round needs another process's node). The
 * nodes are the network's own, started again (their processes, burners and caches) with the hub URL of
 * their configuration. A failure is any answer but a 200.
 */
async function measureScaleOut(
  network: VerificationNetwork,
  contracts: { NodeRegistry: string; AttestationVerifier: string },
  options: {
    projectRoot: string;
    queries: number;
    concurrency: number;
    queriesOf: (count: number) => Query[];
    log: (line: string) => void;
  },
): Promise<ScaleOutRow[]> {
  const { log } = options;
  const template = network.nodes[0];
  const workDir = path.dirname(path.dirname(template.cacheDir));
  const apiEnv = {
    EVM_RPC_URLS: template.env.EVM_RPC_URLS,
    SOLANA_RPC_URLS: template.env.SOLANA_RPC_URLS,
    API_KEYS_DB: path.join(workDir, "api-keys.sqlite"),
    ATTESTATION_L2_RPC_URL: template.env.L2_RPC_URLS.split(",")[0],
    ATTESTATION_L2_WS_URL: template.env.L2_WS_URL,
    ATTESTATION_NODE_REGISTRY: contracts.NodeRegistry,
    ATTESTATION_VERIFIER: contracts.AttestationVerifier,
    ATTESTATION_EVM_CONFIRMATIONS: "1",
    RATE_LIMIT_CAPACITY: "1000000",
    RATE_LIMIT_REFILL_PER_SECOND: "1000000",
    LOG_LEVEL: "warn",
  };
  const nodeSpecs = network.nodes.map(({ name, cacheDir, logFile, env }) => ({ name, cacheDir, logFile, env }));
  log("Scale-out: stopping the network's nodes; each configuration starts its API processes and the nodes again…");
  await Promise.all(network.nodes.map((node) => node.stop()));

  const rows: ScaleOutRow[] = [];
  const measure = async (configuration: string, apis: ApiProcess[]) => {
    let nodes: CircuitNodeProcess[] = [];
    try {
      // Node i dials instance i (mod their number): with three instances, one node each.
      nodes = await Promise.all(
        nodeSpecs.map((spec, index) =>
          spawnCircuitNode(options.projectRoot, spec.name, spec.cacheDir, spec.logFile, {
            ...withoutHubUrls(spec.env),
            ATTESTATION_HUB_URL: `ws://127.0.0.1:${apis[index % apis.length].port}/attest/ws`,
          }),
        ),
      );
      for (const api of apis) await waitForNodes(api.port, nodeSpecs.length);
      log(`Scale-out: ${configuration}: ${options.queries} attested queries, ${options.concurrency} at a time…`);
      const queries = options.queriesOf(options.queries);
      const samples: number[] = [];
      let failures = 0;
      const failureReasons: Record<string, number> = {};
      let next = 0;
      const started = performance.now();
      const worker = async (lane: number) => {
        for (let index = next++; index < queries.length; index = next++) {
          // Requests spread over the instances: each process opens rounds.
          const api = apis[(index + lane) % apis.length];
          const query = queries[index];
          const sent = performance.now();
          const response = await fetch(`http://127.0.0.1:${api.port}${query.path}?attest=true`, {
            method: "POST",
            headers: { authorization: network.apiKey, "content-type": "application/json", connection: "close" },
            body: JSON.stringify(query.body),
          }).catch((error: unknown) => error as Error);
          const ok = !(response instanceof Error) && response.status === 200;
          const text = response instanceof Error ? response.message : await response.text();
          if (ok) samples.push(performance.now() - sent);
          else {
            failures += 1;
            const reason =
              response instanceof Error ? text : `${response.status} ${(JSON.parse(text) as { message?: string }).message ?? ""}`;
            failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
          }
        }
      };
      await Promise.all(Array.from({ length: options.concurrency }, (_, lane) => worker(lane)));
      const seconds = (performance.now() - started) / 1000;
      const { medianMs, p95Ms } = summarize(configuration, samples.length > 0 ? samples : [Number.NaN]);
      rows.push({
        configuration,
        answers: samples.length,
        answersPerSecond: samples.length / seconds,
        p50Ms: medianMs,
        p95Ms,
        failures,
        failureReasons,
      });
    } finally {
      await Promise.all(nodes.map((node) => node.stop()));
      await Promise.all(apis.map((api) => api.stop()));
    }
  };

  const spawnApi = (env: Record<string, string>) => startApiProcess(options.projectRoot, { ...apiEnv, ...env });
  await measure("1 API process", [await spawnApi({ API_WORKERS: "1" })]);
  await measure("1 API process, 2 workers (rounds through the primary)", [await spawnApi({ API_WORKERS: "2" })]);
  const redis = await startRedisServer();
  const three = "3 API processes on one Redis, nodes spread";
  if (redis === undefined) {
    rows.push({ configuration: three, answers: 0, answersPerSecond: 0, p50Ms: 0, p95Ms: 0, failures: 0, skipped: "no redis-server" });
  } else {
    try {
      // One secret for the three: they seal and check every message on Redis with it.
      const busSecret = hexlify(randomBytes(32)).slice(2);
      const apis = await Promise.all([0, 1, 2].map(() => spawnApi({ API_WORKERS: "1", REDIS_URL: redis.url, HUB_BUS_SECRET: busSecret })));
      await measure(three, apis);
    } finally {
      await redis.stop();
    }
  }
  return rows;
}

/** Starts `scripts/api.ts` on a free port with `env`; resolves once it answers `/healthz`. */
async function startApiProcess(projectRoot: string, env: Record<string, string>): Promise<ApiProcess> {
  const api = await spawnApiService({ projectRoot, env });
  return { port: api.port, stop: async () => void (await api.stop()) };
}

/** Waits (up to 2 minutes: a node connects after its first heartbeat) until the hub at `port` lists `count` connected nodes. */
async function waitForNodes(port: number, count: number): Promise<void> {
  for (const deadline = Date.now() + 120_000; ;) {
    const listed = await fetch(`http://127.0.0.1:${port}/attest/nodes`, { headers: { connection: "close" } })
      .then(async (response) => ((await response.json()) as { nodes: Array<{ connected: boolean }> }).nodes)
      .catch(() => []);
    if (listed.filter((node) => node.connected).length >= count) return;
    if (Date.now() > deadline) throw new Error(`the hub on port ${port} did not see ${count} nodes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A node's environment without its hub URLs (the configuration sets its own). */
function withoutHubUrls(env: Record<string, string>): Record<string, string> {
  const { ATTESTATION_HUB_URL: _url, ATTESTATION_HUB_URLS: _urls, ...rest } = env;
  return rest;
}
