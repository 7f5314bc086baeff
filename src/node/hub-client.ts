import type { Provider, Wallet } from "ethers";
import type { Logger } from "pino";

import { createFailoverTransport } from "../chains/solana/failover-transport.ts";
import type { JsonRpcPool } from "../chains/rpc/json-rpc-pool.ts";
import type { EvmBalanceReader } from "../chains/evm/balance-reader.ts";
import { attestationDomain } from "../common/attestation.ts";
import { challengeText, type HubMessage } from "../common/hub-protocol.ts";
import { AttestationSigner } from "./attestation-signer.ts";
import type { NodeConfig } from "./config.ts";
import type { NodeMetrics } from "./health.ts";
import { PinnedReaders } from "../chains/pinned-readers.ts";

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
// The node's L2 head time is reused this long: about half an L2 block, well within the skew tolerance.
const L2_HEAD_TIME_TTL_MS = 1_000;

export interface HubClientOptions {
  url: string;
  chainId: bigint;
  wallet: Pick<Wallet, "address" | "signMessage" | "signTypedData">;
  signer: Pick<AttestationSigner, "answer">;
  logger: Logger;
  /** Told when the hub admits the node or the connection closes, and of each request's outcome. */
  onAdmitted?: (admitted: boolean) => void;
  onAnswered?: (outcome: "signed" | "refused") => void;
  /** Reconnect delays (tests shorten them). */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * The node's one outbound WebSocket to the API's attestation hub (the node opens no port). It answers the
 * login challenge with its burner key, after checking that the challenge names its own L2 chain, then
 * answers attestation requests through `signer`. A closed connection is opened again with exponential
 * backoff (0.5 s doubling to 30 s, reset once admitted), like the node's L2 subscription. Returns stop.
 */
export function connectToHub(options: HubClientOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "hub-client" });
  const firstRetryMs = options.firstRetryMs ?? FIRST_RETRY_MS;
  let retryMs = firstRetryMs;
  let stopped = false;
  let socket: WebSocket | undefined;
  let timer: NodeJS.Timeout | undefined;
  const connect = () => {
    if (stopped) return;
    const ws = new WebSocket(options.url);
    socket = ws;
    const send = (message: unknown) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(message));
    ws.addEventListener("error", () => undefined); // followed by "close"
    ws.addEventListener("message", (event) => {
      let message: HubMessage;
      try {
        message = JSON.parse(String(event.data)) as HubMessage;
      } catch {
        return;
      }
      if (message.type === "challenge") {
        if (message.chainId !== options.chainId.toString()) {
          logger.error(
            { hubChainId: String(message.chainId), chainId: String(options.chainId) },
            "the hub's challenge names another L2 chain: not logging in",
          );
          return ws.close(1000);
        }
        void options.wallet
          .signMessage(challengeText(message.hub, message.chainId, message.nonce))
          .then((signature) => send({ type: "hello", burner: options.wallet.address, signature }));
      } else if (message.type === "welcome") {
        retryMs = firstRetryMs;
        options.onAdmitted?.(true);
        logger.info({ licenses: message.licenseIds.map(String) }, "admitted by the attestation hub");
      } else if (message.type === "attest") {
        void options.signer.answer(message).then(
          (reply) => {
            options.onAnswered?.(reply.type === "attestation" ? "signed" : "refused");
            send(reply);
          },
          (error: unknown) => {
            logger.warn({ requestId: message.id, error: (error as Error)?.name ?? "error" }, "attestation failed");
            options.onAnswered?.("refused");
            send({ type: "refusal", id: message.id, reason: "internal error" });
          },
        );
      }
    });
    ws.addEventListener("close", (event) => {
      options.onAdmitted?.(false);
      if (stopped) return;
      logger.warn(
        { code: event.code, reason: event.reason || undefined, reconnectInSeconds: retryMs / 1000 },
        "the attestation hub connection closed; reconnecting",
      );
      timer = setTimeout(connect, retryMs);
      retryMs = Math.min(options.maxRetryMs ?? MAX_RETRY_MS, retryMs * 2);
    });
  };
  connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    socket?.close(1000);
  };
}

/**
 * The timestamp of the latest L2 block read through `provider()` (the node's current L2 endpoint), what
 * the signer checks the hub's issue time against. One read is shared by every caller while it is pending
 * and reused for `maxAgeMs` after, so a burst of attestation requests costs one RPC call; a failed read is
 * not kept (`onError` moves to the next L2 URL).
 */
export function l2HeadTimeReader(
  provider: () => Pick<Provider, "getBlock">,
  options: { maxAgeMs?: number; onError?: () => void } = {},
): () => Promise<bigint> {
  const maxAgeMs = options.maxAgeMs ?? L2_HEAD_TIME_TTL_MS;
  let cached: { at: number; time: Promise<bigint>; settled: boolean } | undefined;
  return () => {
    if (cached !== undefined && (!cached.settled || Date.now() - cached.at < maxAgeMs)) return cached.time;
    const entry = {
      at: Date.now(),
      settled: false,
      time: provider()
        .getBlock("latest")
        .then((block) => {
          if (block === null) throw new Error("the L2 returned no latest block");
          return BigInt(block.timestamp);
        }),
    };
    cached = entry;
    entry.time.then(
      () => {
        entry.settled = true;
        entry.at = Date.now();
      },
      () => {
        if (cached === entry) cached = undefined;
        options.onError?.();
      },
    );
    return entry.time;
  };
}

/** Wires the hub client from the node's configuration; undefined when no hub URL is configured. */
export function startAttesting(
  config: NodeConfig,
  node: {
    wallet: Wallet;
    chainId: bigint;
    evmRpc: JsonRpcPool;
    evm: Pick<EvmBalanceReader, "latestBlock">;
    /** The node's current L2 endpoint: the issue time is checked against its head. */
    l2: () => Pick<Provider, "getBlock">;
    /** Called after a failed L2 read (the node's failover). */
    onL2Error?: () => void;
    licenses: () => readonly bigint[];
    logger: Logger;
    metrics: NodeMetrics;
  },
): (() => Promise<void>) | undefined {
  if (config.ATTESTATION_HUB_URL === undefined || config.ATTESTATION_VERIFIER === undefined) return undefined;
  const pinned = new PinnedReaders(
    node.evmRpc,
    createFailoverTransport({ urls: config.SOLANA_RPC_URLS, timeoutMs: config.UPSTREAM_TIMEOUT_MS }),
  );
  const signer = new AttestationSigner({
    wallet: node.wallet,
    domain: attestationDomain(node.chainId, config.ATTESTATION_VERIFIER),
    pinned,
    evmHead: () => node.evm.latestBlock(),
    licenses: node.licenses,
    maxBlockLag: config.ATTESTATION_MAX_BLOCK_LAG,
    l2HeadTime: l2HeadTimeReader(node.l2, { onError: node.onL2Error }),
    maxClockSkewSeconds: config.ATTESTATION_MAX_CLOCK_SKEW_SECONDS,
  });
  return connectToHub({
    url: config.ATTESTATION_HUB_URL,
    chainId: node.chainId,
    wallet: node.wallet,
    signer,
    logger: node.logger,
    onAdmitted: (admitted) => node.metrics.hubConnected.set(admitted ? 1 : 0),
    onAnswered: (outcome) => node.metrics.attestations.inc({ outcome }),
  });
}
