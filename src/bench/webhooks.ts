import { spawnSync } from "node:child_process";
import { readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import type { Address } from "@solana/kit";
import {
  Contract,
  getAddress,
  type ContractTransactionResponse,
  hexlify,
  NonceManager,
  randomBytes,
  Wallet,
  WebSocketProvider,
} from "ethers";

import { ApiKeys } from "../api/keys/api-keys.ts";
import { devAccount } from "../devnet/accounts.ts";
import { spawnApiService, type ApiServiceProcess } from "../devnet/api-service.ts";
import { devnetProvider } from "../devnet/op-devnet.ts";
import { startPostgresServer } from "../devnet/postgres-server.ts";
import { startSourceFixtures, type SourceFixtures } from "../devnet/source-chains.ts";
import { WebhookReceiver, type ReceivedDelivery } from "../devnet/webhook-receiver.ts";

/** The source's block time: the latency bar is one block and 500 ms. */
export const BENCH_BLOCK_SECONDS = 2;
const SUBSCRIPTIONS_PER_REQUEST = 500;

export interface WebhookBenchOptions {
  /** Watched pairs at each step (the last one the largest): latency, memory and CPU are measured at each. */
  pairSteps: readonly number[];
  /** Changes timed per chain at each step. */
  changes: number;
  /** How long the receiver answers 500 in the outage part (the bar: 10 minutes). */
  outageSeconds: number;
  projectRoot: string;
  print: (line: string) => void;
}

export interface LatencyFigures {
  count: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
}

export interface StepFigures {
  pairs: number;
  evm: LatencyFigures;
  solana: LatencyFigures;
  rssMiB: number;
  /** CPU seconds the API process used per wall second while following an idle chain with its pairs. */
  idleCpu: number;
}

/**
 * `npm run bench:webhooks` on chains of its own (anvil mining a block every 2 s, the LiteSVM endpoint) and `npm
 * run api` as its own process: change-to-delivery latency, memory and CPU at each number of watched pairs; the
 * API killed while deliveries are pending and started again; a receiver refusing for `outageSeconds`; two API
 * processes on one PostgreSQL database.
 */
export async function benchmarkWebhooks(options: WebhookBenchOptions): Promise<void> {
  const { print } = options;
  const sources = await startSourceFixtures({ evmBlockSeconds: BENCH_BLOCK_SECONDS });
  const provider = devnetProvider(sources.anvil.rpcUrl, 1);
  const heads = await followHeads(sources.anvil.wsUrl);
  const work = await mkdtemp(path.join(tmpdir(), "avn-bench-webhooks-"));
  const receiver = new WebhookReceiver();
  const url = await receiver.listen();
  const holder = new NonceManager(new Wallet(devAccount(7).privateKey, provider));
  const token = new Contract(sources.evm.erc20, ["function transfer(address,uint256) returns (bool)"], holder);
  /** Moves `amount` of the demo ERC-20 to `owner`; resolves with the block it was mined in. */
  const transfer = async (owner: string, amount: bigint) => {
    const sent = (await token.getFunction("transfer")(owner, amount)) as ContractTransactionResponse;
    return (await sent.wait())!.blockNumber;
  };
  try {
    const keysFile = path.join(work, "keys.sqlite");
    const apiKey = await createKey(keysFile);
    const apiEnv = benchApiEnv(sources, keysFile);
    let api = await spawnApiService({ projectRoot: options.projectRoot, env: apiEnv, logFile: path.join(work, "api.log") });
    const client = subscriber(() => api.url, apiKey, url);
    try {
      // The pairs that change: fresh owners on Ethereum, fresh wallets with an empty associated account on Solana.
      const evmMovers = Array.from({ length: options.changes }, randomOwner);
      // One transaction at a time: the ledger's blockhash moves with each.
      const solanaMovers: Array<{ owner: string; account: string }> = [];
      for (let index = 0; index < options.changes; index++) {
        const wallet = await sources.ledger.newWallet();
        solanaMovers.push({ owner: wallet.address, account: await sources.ledger.associatedAccount(wallet.address, sources.svm.splMint) });
      }
      // And the pairs of the restart and the outage parts.
      const killOwners = Array.from({ length: 5 }, randomOwner);
      const outageOwners = Array.from({ length: 3 }, randomOwner);
      const erc20 = (owner: string) => ({ chain: "ethereum", owner, asset: sources.evm.erc20 });
      const movers = [
        ...evmMovers.map(erc20),
        ...solanaMovers.map(({ owner }) => ({ chain: "solana", owner, asset: sources.svm.splMint })),
        ...killOwners.map(erc20),
        ...outageOwners.map(erc20),
      ];
      const moverIds = await client.subscribe(movers);
      const killIds = moverIds.slice(2 * options.changes, 2 * options.changes + killOwners.length);
      const outageIds = moverIds.slice(2 * options.changes + killOwners.length);
      let watched = movers.length;
      const steps: StepFigures[] = [];
      for (const pairs of options.pairSteps) {
        const added = pairs - watched;
        print(`Subscribing ${added} more pairs (to ${pairs})…`);
        const started = performance.now();
        for (let done = 0; done < added; done += SUBSCRIPTIONS_PER_REQUEST) {
          const batch = Array.from({ length: Math.min(SUBSCRIPTIONS_PER_REQUEST, added - done) }, () => ({
            chain: "ethereum",
            owner: randomOwner(),
            asset: sources.evm.erc20,
          }));
          await client.subscribe(batch);
        }
        watched = pairs;
        print(`  created in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        await untilMetric(api.url, 'api_webhook_watched_pairs{chain="ethereum"}', pairs - solanaMovers.length);
        const idle = await idleUsage(api.pid, 20_000);
        const evm = await timeChanges(receiver, moverIds.slice(0, options.changes), async (index) => {
          const block = await transfer(evmMovers[index], 1n);
          return heads.seenAt(block);
        });
        const solana = await timeChanges(receiver, moverIds.slice(options.changes, 2 * options.changes), async (index) => {
          await sources.ledger.mintTo(sources.svm.splMint, solanaMovers[index].account as Address, 1n);
          return Date.now(); // executed: the slot's block exists from now on
        });
        steps.push({ pairs, evm, solana, ...idle });
        print(
          `  ${pairs} pairs: EVM p95 ${evm.p95Ms} ms (median ${evm.medianMs}), Solana p95 ${solana.p95Ms} ms (median ${solana.medianMs}); RSS ${idle.rssMiB} MiB; idle CPU ${(idle.idleCpu * 100).toFixed(1)}%`,
        );
      }
      printSteps(print, steps);

      // The API killed while deliveries are pending, and started again on the same database.
      print("\nKilling the API while deliveries are pending…");
      const before = new Map(killIds.map((id) => [id, receiver.forSubscription(id).length]));
      receiver.status = () => 503;
      const refusedBefore = receiver.answered.length;
      for (const owner of killOwners) await transfer(owner, 10n);
      await receiver.waitFor(() => receiver.answered.length >= refusedBefore + killIds.length);
      await api.kill();
      for (const owner of killOwners) await transfer(owner, 100n);
      receiver.status = () => 200;
      api = await spawnApiService({ projectRoot: options.projectRoot, env: apiEnv, logFile: path.join(work, "api.log") });
      const restarted = performance.now();
      await receiver.waitFor(() => killIds.every((id) => receiver.forSubscription(id).length >= before.get(id)! + 2));
      const afterKill = killIds.map((id) => receiver.forSubscription(id).slice(before.get(id)));
      print(
        `  after the restart, every change arrived in ${((performance.now() - restarted) / 1000).toFixed(1)} s: ` +
          `${afterKill.flat().length} deliveries for ${killIds.length * 2} changes; ${describeIds(afterKill.flat())}`,
      );

      // A receiver that answers 500 for the outage, then 200.
      print(`\nThe receiver answers 500 for ${options.outageSeconds} s…`);
      const outageBefore = new Map(outageIds.map((id) => [id, receiver.forSubscription(id).length]));
      receiver.status = () => 500;
      const outageStarted = Date.now();
      for (let round = 0; round < 2; round++) for (const owner of outageOwners) await transfer(owner, 1_000n);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageStarted + options.outageSeconds * 1000 - Date.now())));
      receiver.status = () => 200;
      const recovered = performance.now();
      await receiver.waitFor(() => outageIds.every((id) => receiver.forSubscription(id).length >= outageBefore.get(id)! + 2));
      const outageDeliveries = outageIds.map((id) => receiver.forSubscription(id).slice(outageBefore.get(id)));
      const inOrder = outageDeliveries.every(
        (deliveries) => deliveries.length >= 2 && (deliveries[1].body.balance as bigint) > (deliveries[0].body.balance as bigint),
      );
      print(
        `  every change arrived ${((performance.now() - recovered) / 1000).toFixed(1)} s after the receiver recovered, ` +
          `${inOrder ? "in order" : "OUT OF ORDER"} per subscription; ${describeIds(outageDeliveries.flat())}`,
      );
      await api.stop();
    } finally {
      await api.stop();
    }

    await twoProcessesOnPostgres(options, sources, receiver, url, transfer, print);
  } finally {
    heads.stop();
    provider.destroy();
    await receiver.close();
    await sources.stop();
    await rm(work, { recursive: true, force: true });
  }
}

/** Two API processes on one PostgreSQL database: each change delivered once. */
async function twoProcessesOnPostgres(
  options: WebhookBenchOptions,
  sources: SourceFixtures,
  receiver: WebhookReceiver,
  url: string,
  transfer: (owner: string, amount: bigint) => Promise<number>,
  print: (line: string) => void,
): Promise<void> {
  const postgres = await startPostgresServer();
  if (postgres === undefined) {
    print("\nTwo API processes on PostgreSQL: skipped, no PostgreSQL server here (apt-get install postgresql)");
    return;
  }
  const apis: ApiServiceProcess[] = [];
  try {
    const database = await postgres.createDatabase();
    const apiKey = await createKey(database);
    for (let index = 0; index < 2; index++)
      apis.push(await spawnApiService({ projectRoot: options.projectRoot, env: benchApiEnv(sources, database) }));
    const owners = Array.from({ length: 10 }, randomOwner);
    const ids = await subscriber(() => apis[0].url, apiKey, url).subscribe(
      owners.map((owner) => ({ chain: "ethereum", owner, asset: sources.evm.erc20 })),
    );
    const before = receiver.deliveries.length;
    for (let round = 0; round < 2; round++) for (const owner of owners) await transfer(owner, 1n);
    await receiver.waitFor(() => ids.every((id) => receiver.forSubscription(id).length >= 2));
    const arrived = receiver.deliveries.slice(before).filter((delivery) => ids.includes(String(delivery.body.subscriptionId)));
    print(
      `\nTwo API processes on one PostgreSQL database: ${owners.length * 2} changes, ${arrived.length} deliveries; ${describeIds(arrived)}`,
    );
  } finally {
    for (const api of apis) await api.stop();
    await postgres.stop();
  }
}

function benchApiEnv(sources: SourceFixtures, keysDb: string): Record<string, string> {
  return {
    API_WORKERS: "1",
    API_KEYS_DB: keysDb,
    EVM_RPC_URLS: sources.anvil.rpcUrl,
    SOLANA_RPC_URLS: sources.solanaRpc.url,
    WEBHOOK_ALLOW_PRIVATE: "true",
    // Subscribing 100,000 pairs is 200 requests; the bench is not measuring the rate limit.
    RATE_LIMIT_CAPACITY: "100000",
    RATE_LIMIT_REFILL_PER_SECOND: "100000",
    LOG_LEVEL: "warn",
  };
}

async function createKey(location: string): Promise<string> {
  const keys = await ApiKeys.open(location);
  try {
    return (await keys.create("bench")).key;
  } finally {
    await keys.close();
  }
}

const randomOwner = () => getAddress(hexlify(randomBytes(20)));

function subscriber(baseUrl: () => string, apiKey: string, url: string) {
  return {
    /** Subscribes `items` (at most 500) to `url`; their ids in order. */
    async subscribe(items: ReadonlyArray<{ chain: string; owner: string; asset: string }>): Promise<string[]> {
      const response = await fetch(`${baseUrl()}/api/subscriptions`, {
        method: "POST",
        headers: { authorization: apiKey, "content-type": "application/json" },
        body: JSON.stringify(items.map((item) => ({ ...item, url }))),
      });
      if (response.status !== 201) throw new Error(`POST /api/subscriptions answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { subscriptions: Array<{ id: string }> }).subscriptions.map(({ id }) => id);
    },
  };
}

/** The local time each new block was announced (`newHeads`), by number. */
async function followHeads(wsUrl: string) {
  const seen = new Map<number, number>();
  const waiters = new Map<number, Array<(at: number) => void>>();
  const socket = new WebSocketProvider(wsUrl, 1);
  await socket.on("block", (number: number) => {
    const at = Date.now();
    seen.set(number, at);
    for (const resolve of waiters.get(number) ?? []) resolve(at);
    waiters.delete(number);
  });
  return {
    seenAt(block: number): Promise<number> {
      const at = seen.get(block);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve) => waiters.set(block, [...(waiters.get(block) ?? []), resolve]));
    },
    stop: () => void socket.destroy(),
  };
}

/**
 * Makes one change per subscription of `ids` in turn (`change(index)` resolves with when the change's block
 * appeared) and times each until its delivery arrived.
 */
async function timeChanges(
  receiver: WebhookReceiver,
  ids: readonly string[],
  change: (index: number) => Promise<number>,
): Promise<LatencyFigures> {
  const latencies: number[] = [];
  for (const [index, id] of ids.entries()) {
    const before = receiver.forSubscription(id).length;
    const arrived = receiver.waitFor(() => receiver.forSubscription(id).length > before);
    const changedAt = await change(index);
    await arrived;
    latencies.push(receiver.forSubscription(id)[before].receivedAt - changedAt);
  }
  return figures(latencies);
}

function figures(values: number[]): LatencyFigures {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (quantile: number) => sorted[Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1)];
  return { count: sorted.length, medianMs: Math.round(at(0.5)), p95Ms: Math.round(at(0.95)), maxMs: Math.round(sorted[sorted.length - 1]) };
}

/** The process's resident memory, and its CPU use over `windowMs` of following an idle chain. */
async function idleUsage(pid: number, windowMs: number): Promise<{ rssMiB: number; idleCpu: number }> {
  const ticksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
  const cpuSeconds = async () => {
    const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond; // utime, stime
  };
  const startCpu = await cpuSeconds();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const idleCpu = (await cpuSeconds()) - startCpu;
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(rssKiB / 1024), idleCpu: idleCpu / ((performance.now() - started) / 1000) };
}

/** Resolves once `/metrics` shows `series` at `value` or more (the follower has loaded its pairs). */
async function untilMetric(baseUrl: string, series: string, value: number): Promise<void> {
  for (;;) {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const line = text.split("\n").find((entry) => entry.startsWith(series));
    if (line !== undefined && Number(line.split(" ").pop()) >= value) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** How many deliveries, distinct ids and changes (subscription and block) they carried. */
function describeIds(deliveries: readonly ReceivedDelivery[]): string {
  const ids = new Set(deliveries.map((delivery) => delivery.deliveryId));
  const changes = new Map<string, Set<string>>();
  for (const delivery of deliveries) {
    const change = `${String(delivery.body.subscriptionId)}@${String(delivery.body.block)}`;
    changes.set(change, (changes.get(change) ?? new Set()).add(delivery.deliveryId));
  }
  const twiceWithDifferentIds = [...changes.values()].filter((set) => set.size > 1).length;
  return `${ids.size} distinct ids for ${changes.size} changes, ${twiceWithDifferentIds} change(s) delivered under two ids, ${deliveries.length - ids.size} repeat(s) of an id`;
}

function printSteps(print: (line: string) => void, steps: readonly StepFigures[]): void {
  print(`\n| watched pairs | EVM median / p95 / max ms | Solana median / p95 / max ms | RSS MiB | idle CPU |\n|---:|---|---|---:|---:|`);
  for (const step of steps)
    print(
      `| ${step.pairs} | ${step.evm.medianMs} / ${step.evm.p95Ms} / ${step.evm.maxMs} | ${step.solana.medianMs} / ${step.solana.p95Ms} / ${step.solana.maxMs} | ${step.rssMiB} | ${(step.idleCpu * 100).toFixed(1)}% |`,
    );
  print(
    `Bar: p95 ≤ one source block + 500 ms = ${BENCH_BLOCK_SECONDS * 1000 + 500} ms on Ethereum (a block every ${BENCH_BLOCK_SECONDS} s).`,
  );
}
