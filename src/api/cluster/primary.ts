import cluster, { type Worker } from "node:cluster";

import { AggregatorRegistry } from "prom-client";
import type { Logger } from "pino";

import { ApiKeys } from "../keys/api-keys.ts";
import { MemoryRateLimitStore, type RateLimitStore, type TakeMode } from "../rate-limit/token-bucket.ts";
import { HubBusRouter } from "../attestation-hub/bus/primary-bus.ts";
import { attestationSettings, type ApiConfig } from "../config.ts";
import { serveWorkers, type IpcService } from "./ipc.ts";

/** A worker that dies on its own is replaced; this many deaths within a minute stop the API instead. */
const MAX_CRASHES_PER_MINUTE = 5;

export interface RunningCluster {
  /** Resolves when every worker listens. */
  ready: Promise<void>;
  /** Asks every worker to finish its requests and exit, then closes the shared state. */
  stop(): Promise<void>;
  /** Resolves with the exit code the primary should end with (after `stop`, or when workers keep crashing). */
  done: Promise<number>;
}

/**
 * The primary of an API with several worker processes on one port (Node's `cluster`: the primary
 * accepts connections and hands them to the workers in turn). It serves no request itself; it holds
 * what the workers must share: the rate-limit buckets (unless they are in Redis, where every process,
 * on any host, shares them already) and the metrics, summed over the workers when one is asked for
 * `/metrics`. Keys and usage are shared through the key database each worker opens. With the attestation
 * hub and no Redis, it also routes the hub's rounds and answers between the workers and keeps their
 * node sessions and statistics (`HubBusRouter`).
 */
export async function startApiCluster(config: ApiConfig, workers: number, log: Logger): Promise<RunningCluster> {
  // Migrate once, before any worker opens the database (workers open it without migrating).
  await (await ApiKeys.open(config.API_KEYS_DB)).close();
  const policy = { capacity: config.RATE_LIMIT_CAPACITY, refillPerSecond: config.RATE_LIMIT_REFILL_PER_SECOND };
  const rateLimits: RateLimitStore | undefined = config.REDIS_URL === undefined ? new MemoryRateLimitStore(policy) : undefined;
  const aggregator = new AggregatorRegistry();
  const services: Record<string, IpcService> = {
    metrics: { exposition: async () => aggregator.clusterMetrics() },
  };
  if (rateLimits !== undefined) services.rateLimit = rateLimitService(rateLimits);
  const hubRouter = config.REDIS_URL === undefined && attestationSettings(config) !== undefined ? new HubBusRouter() : undefined;
  if (hubRouter !== undefined) services.hubBus = hubRouter.service;
  const stopServing = serveWorkers(services);

  let stopping = false;
  const crashes: number[] = [];
  /** Workers to fork again after a crash (a second's pause, so a worker crashing at start does not spin). */
  const replacements = new Set<NodeJS.Timeout>();
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let listening = 0;
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));

  const fork = (): Worker => {
    const worker = cluster.fork({ AVN_API_WORKER: "1" });
    worker.once("listening", () => {
      listening += 1;
      if (listening === workers) resolveReady();
    });
    return worker;
  };
  cluster.on("exit", (worker, code, signal) => {
    hubRouter?.workerExited(worker.id);
    const remaining = Object.keys(cluster.workers ?? {}).length;
    // Exit code 0 is a worker that shut down when told to (by the primary, or by a signal sent to it):
    // not replaced. The primary leaves with its last worker.
    if (stopping || (code === 0 && signal === null)) {
      if (remaining === 0) void finish(0);
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && crashes[0] < now - 60_000) crashes.shift();
    log.error({ worker: worker.process.pid, code, signal }, "API worker died");
    if (crashes.length >= MAX_CRASHES_PER_MINUTE) {
      log.fatal({ crashes: crashes.length }, "API workers died within a minute; stopping");
      void stop().then(() => finish(1));
      return;
    }
    // Not unref'd: when every worker died at once, this timer is all that keeps the primary (and the port)
    // alive until their replacements listen. A stop clears it.
    const timer = setTimeout(() => {
      replacements.delete(timer);
      if (!stopping) fork();
    }, 1_000);
    replacements.add(timer);
  });

  let finished = false;
  const finish = async (code: number) => {
    if (finished) return;
    finished = true;
    stopServing();
    await rateLimits?.close();
    resolveDone(code);
  };
  const stop = async () => {
    if (stopping) return done.then(() => undefined);
    stopping = true;
    for (const timer of replacements) clearTimeout(timer);
    replacements.clear();
    const alive = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    if (alive.length === 0) return finish(0);
    // Each worker finishes its requests in flight, flushes its usage counters and exits (scripts/api.ts).
    for (const worker of alive) worker.process.kill("SIGTERM");
    await done;
  };

  for (let index = 0; index < workers; index += 1) fork();
  return { ready, stop, done };
}

/** The rate-limit store's methods, as the workers call them over IPC. */
function rateLimitService(store: RateLimitStore): IpcService {
  return {
    take: (key: string, count?: number, mode?: TakeMode) => store.take(key, count, mode),
  };
}
