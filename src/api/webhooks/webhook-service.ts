import { randomUUID } from "node:crypto";

import type { Kysely } from "kysely";

import type { RpcTransport } from "@solana/kit";

import { EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import { SolanaBalanceReader } from "../../chains/solana/balance-reader.ts";
import type { JsonRpcPool } from "../../chains/rpc/json-rpc-pool.ts";
import { PollingLoop } from "../../common/polling-loop.ts";
import type { KeyDatabaseSchema } from "../keys/database/schema.ts";
import type { ApiMetrics } from "../metrics.ts";
import { DeliveryQueue, type RetryPolicy } from "./delivery-queue.ts";
import { WebhookDispatcher, type AttestHolding, type DispatcherOptions } from "./dispatcher.ts";
import type { ChainFollower } from "./chain-follower.ts";
import { EvmFollower } from "./evm-follower.ts";
import { SolanaFollower } from "./solana-follower.ts";
import { FollowerStore } from "./follower-store.ts";
import type { SubscriptionRoutesDependencies } from "./subscription-routes.ts";
import { SubscriptionStore } from "./subscription-store.ts";
import { postWebhook } from "./webhook-poster.ts";

export interface WebhookServiceOptions {
  db: Kysely<KeyDatabaseSchema>;
  /** The API's Ethereum source. */
  evmRpc: JsonRpcPool;
  /** The API's Solana source. */
  solanaTransport: RpcTransport;
  maxPerKey: number;
  allowPrivate: boolean;
  /** How often the head is asked for, and how often a process that was not woken looks for due deliveries. */
  pollMs: number;
  concurrency: number;
  retry: RetryPolicy;
  /** With the attestation hub: the attestation `attest: true` subscriptions get with each delivery. */
  attest?: AttestHolding;
  /** How long the follower's lead lasts without renewal: a dead leader is replaced after it. */
  leaseMs?: number;
  /**
   * How long a claimed delivery is this process's without renewal (`CLAIM_LEASE_MS`, 6 s): a process that dies
   * mid-attempt leaves it to another after it. Renewed while the attempt runs, so attempts may take longer.
   */
  claimLeaseMs?: number;
  onError: (error: unknown, part: "follower" | "dispatcher") => void;
  /** Told of each renewal of a delivery attempt's lease (`DispatcherOptions.onLeaseRenewed`). */
  onLeaseRenewed?: DispatcherOptions["onLeaseRenewed"];
  /** A watched token whose balance could not be read at a change (it stopped answering `balanceOf`): not recorded. */
  onUnreadable?: (chain: string, owner: string, asset: string) => void;
  /** Where the followers' state and the attempts are counted (`/metrics`). */
  metrics?: ApiMetrics;
}

/**
 * The webhooks of one API process: the routes' stores, the Ethereum follower (which runs only in the process
 * that leads: one per key database) and the dispatcher (in every process: the queue's leases share the work).
 * Everything lives in the key database, so a restarted process picks up where the last one stopped.
 */
export class WebhookService {
  readonly subscriptions: SubscriptionStore;
  readonly queue: DeliveryQueue;
  /** One per chain; the process that leads runs both. */
  readonly followers: readonly ChainFollower[];
  readonly #followerLoops: readonly PollingLoop<void>[];
  readonly #dispatchLoop: PollingLoop<void>;
  readonly #evmReader: EvmBalanceReader;
  readonly #solanaReader: SolanaBalanceReader;
  readonly #options: WebhookServiceOptions;

  constructor(options: WebhookServiceOptions) {
    this.#options = options;
    const owner = `api-${randomUUID()}`;
    this.subscriptions = new SubscriptionStore(options.db);
    this.queue = new DeliveryQueue(options.db, options.retry, options.claimLeaseMs);
    this.#evmReader = new EvmBalanceReader({ rpc: options.evmRpc, batchWindowMs: 2 });
    this.#solanaReader = new SolanaBalanceReader(options.solanaTransport);
    const dispatcher = new WebhookDispatcher({
      queue: this.queue,
      owner,
      concurrency: options.concurrency,
      attest: options.attest,
      post: async (url, body, headers) => {
        const outcome = await postWebhook({ url, body, headers, allowPrivate: options.allowPrivate });
        options.metrics?.webhookAttempts.inc({ outcome: outcome.ok ? "delivered" : "failed" });
        return outcome;
      },
      onError: (error) => options.onError(error, "dispatcher"),
      onLeaseRenewed: options.onLeaseRenewed,
    });
    this.#dispatchLoop = new PollingLoop(
      (isStopping) => dispatcher.drain(isStopping),
      options.pollMs,
      (error) => options.onError(error, "dispatcher"),
    );
    const shared = {
      store: new FollowerStore(options.db),
      subscriptions: this.subscriptions,
      owner,
      leaseMs: options.leaseMs ?? 10_000,
      onRecorded: () => this.#dispatchLoop.wake(),
    };
    this.followers = [
      new EvmFollower({
        ...shared,
        rpc: options.evmRpc,
        reader: this.#evmReader,
        onUnreadable: (pair) => options.onUnreadable?.("ethereum", pair.owner, pair.asset),
      }),
      new SolanaFollower({
        ...shared,
        transport: options.solanaTransport,
        reader: this.#solanaReader,
        onUnreadable: (pair) => options.onUnreadable?.("solana", pair.owner, pair.asset),
      }),
    ];
    this.#followerLoops = this.followers.map(
      (follower) =>
        new PollingLoop(
          async () => {
            await follower.pass();
            // What the follower holds now (0 pairs in a process that does not lead).
            options.metrics?.webhookPairs.set({ chain: follower.chain }, follower.pairCount);
            options.metrics?.webhookPosition.set({ chain: follower.chain }, Number(follower.block ?? 0n));
          },
          options.pollMs,
          (error) => options.onError(error, "follower"),
        ),
    );
  }

  start(): void {
    for (const loop of this.#followerLoops) loop.start();
    this.#dispatchLoop.start();
  }

  /** Stops following and delivering; attempts in flight finish and are recorded; the lead is given up. */
  async close(): Promise<void> {
    for (const loop of this.#followerLoops) await loop.stop();
    await this.#dispatchLoop.stop();
    for (const follower of this.followers) await follower.resign().catch(() => undefined);
  }

  /** What the routes need. */
  routes(): SubscriptionRoutesDependencies {
    return {
      subscriptions: this.subscriptions,
      queue: this.queue,
      maxPerKey: this.#options.maxPerKey,
      allowPrivate: this.#options.allowPrivate,
      attestable: this.#options.attest !== undefined,
      readEvm: async (asset, owner, tokenId) => {
        const read = await this.#evmReader.balanceOf(asset, owner, undefined, tokenId);
        return { balance: read.balance, block: read.blockNumber };
      },
      readSolana: async (mint, owner) => {
        const read = await this.#solanaReader.balanceOf(owner, mint);
        return { balance: read.balance, block: read.slot };
      },
      onChange: () => {
        for (const loop of this.#followerLoops) loop.wake();
        this.#dispatchLoop.wake();
      },
    };
  }
}
