import { JsonRpcProvider, Network } from "ethers";
import type { Logger } from "pino";

import { describeError } from "../../common/describe-error.ts";
import { urlOrigin } from "../../common/environment.ts";
import { JsonRpcSubscription } from "../../common/json-rpc-subscription.ts";

// A socket that answers no ping within this long is dead although still open (a half-open TCP connection).
const PING_MS = 15_000;

/** An L2 block as the hub knows it: its number and timestamp (seconds). */
export interface L2Head {
  number: bigint;
  timestamp: bigint;
}

export interface L2HeadFollowerOptions {
  /** The L2's WebSocket JSON-RPC URL (`eth_subscribe` `newHeads`). */
  wsUrl: string;
  /** The L2's HTTP JSON-RPC URL: the first read, and the fallback while the subscription is down. */
  rpcUrl: string;
  chainId: bigint;
  logger: Logger;
  /** Reconnect delays: the first, doubled up to the cap (tests shorten them). */
  firstRetryMs?: number;
  maxRetryMs?: number;
  pingMs?: number;
}

/**
 * The hub's view of L2 time: the highest L2 head, followed over a WebSocket `eth_subscribe` `newHeads`
 * subscription, so that `issuedAt()` is the chain's clock (what `AttestationVerifier` compares against
 * `block.timestamp`), not this host's wall clock, which runs ahead of the last block.
 *
 * The socket is the services' `ReconnectingSocket`: ethers' `WebSocketProvider` never reconnects, and viem's
 * WebSocket transport re-sends its subscriptions only within a fixed number of reconnect attempts (5 by
 * default) and then drops them, so a longer outage would end the subscription for good. It reconnects with
 * the one capped backoff for as long as it runs, and this class subscribes again each time.
 *
 * While the subscription is not live (before it is confirmed and caught up, or during an outage),
 * `issuedAt()` reads the latest block over HTTP instead, one request for all callers waiting at once.
 * The head never goes backwards: a lower or equal block number is ignored, and the timestamp kept is the
 * highest seen.
 */
export class L2HeadFollower {
  readonly #options: L2HeadFollowerOptions;
  readonly #logger: Logger;
  readonly #provider: JsonRpcProvider;
  readonly #heads: JsonRpcSubscription;
  #head: L2Head | undefined;
  /** Counts the subscriptions confirmed: a read begun under one does not make a later one live. */
  #subscriptions = 0;
  #subscribed = false;
  /** The subscription is confirmed and the head is current (a notification or a read since then). */
  #live = false;
  #reading: Promise<bigint> | undefined;
  #outage = false;

  constructor(options: L2HeadFollowerOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: "l2-head" });
    this.#provider = new JsonRpcProvider(options.rpcUrl, Network.from(options.chainId), {
      staticNetwork: true,
      cacheTimeout: -1,
      batchMaxCount: 1,
    });
    this.#heads = new JsonRpcSubscription({
      url: options.wsUrl,
      params: ["newHeads"],
      pingMs: options.pingMs ?? PING_MS,
      firstRetryMs: options.firstRetryMs,
      maxRetryMs: options.maxRetryMs,
      onSubscribed: () => this.#onSubscribed(),
      onRefused: (error) => this.#logger.warn({ error: describeError(error) }, "the L2 refused the newHeads subscription"),
      onEvent: (result) => {
        const head = parseHead(result);
        if (head === undefined) return;
        this.#observe(head);
        this.#live = true;
      },
      onClose: ({ code, retryInMs }) => {
        this.#subscribed = false;
        this.#live = false;
        if (!this.#outage)
          this.#logger.warn(
            { l2: urlOrigin(this.#options.wsUrl), code, reconnectInMs: retryInMs },
            "the L2 head subscription is down; reading the head over HTTP meanwhile, reconnecting",
          );
        this.#outage = true;
      },
    });
  }

  /** Opens the subscription and reads the latest block once, so that `issuedAt()` is right at once; throws when that read fails. */
  async start(): Promise<void> {
    this.#heads.start();
    try {
      await this.#readLatest();
    } catch (error) {
      this.stop();
      throw error;
    }
  }

  /** The highest head seen so far (undefined before the first read). */
  get head(): L2Head | undefined {
    return this.#head;
  }

  /** Whether the subscription is up and current (`issuedAt()` then answers without a request). */
  get following(): boolean {
    return this.#live;
  }

  /** The latest L2 head's timestamp in seconds: the issue time the hub pins. */
  async issuedAt(): Promise<bigint> {
    if (this.#live && this.#head !== undefined) return this.#head.timestamp;
    return this.#readLatest();
  }

  /** Closes the socket and the HTTP provider and clears every timer. Idempotent. */
  stop(): void {
    this.#live = false;
    this.#heads.stop();
    this.#provider.destroy();
  }

  #onSubscribed(): void {
    if (this.#outage) this.#logger.info("following the L2 head again");
    this.#outage = false;
    this.#subscribed = true;
    const subscription = ++this.#subscriptions;
    // A block mined while subscribing was announced to nobody: read the head once more (a read begun
    // before the subscription may predate that block, so after it ends), then trust the notifications.
    const pending = this.#reading?.catch(() => undefined) ?? Promise.resolve();
    void pending
      .then(() => this.#readLatest())
      .then(
        () => {
          if (this.#subscribed && this.#subscriptions === subscription) this.#live = true;
        },
        () => undefined, // issuedAt() keeps reading over HTTP until a notification comes
      );
  }

  /** One `eth_getBlockByNumber("latest")` for every caller waiting at once; resolves with the (monotonic) head time. */
  #readLatest(): Promise<bigint> {
    this.#reading ??= this.#provider
      .send("eth_getBlockByNumber", ["latest", false])
      .then((block: unknown) => {
        const head = parseHead(block);
        if (head === undefined) throw new Error("the L2 answered eth_getBlockByNumber(latest) without a block");
        return this.#observe(head).timestamp;
      })
      .finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** Keeps the higher of the known head and `head` (by number; the timestamp never decreases); returns it. */
  #observe(head: L2Head): L2Head {
    const current = this.#head;
    if (current !== undefined && head.number <= current.number) return current;
    this.#head = {
      number: head.number,
      timestamp: current !== undefined && current.timestamp > head.timestamp ? current.timestamp : head.timestamp,
    };
    return this.#head;
  }
}

function parseHead(value: unknown): L2Head | undefined {
  const block = value as { number?: unknown; timestamp?: unknown } | null | undefined;
  const hex = /^0x[0-9a-f]+$/i;
  if (typeof block?.number !== "string" || typeof block.timestamp !== "string") return undefined;
  if (!hex.test(block.number) || !hex.test(block.timestamp)) return undefined;
  return { number: BigInt(block.number), timestamp: BigInt(block.timestamp) };
}
