import type { Provider, Wallet } from "ethers";
import type { Logger } from "pino";

import { createFailoverTransport } from "../chains/solana/failover-transport.ts";
import type { JsonRpcPool } from "../chains/rpc/json-rpc-pool.ts";
import type { EvmBalanceReader } from "../chains/evm/balance-reader.ts";
import { attestationDomain } from "../common/attestation.ts";
import { urlOrigin } from "../common/environment.ts";
import {
  challengeText,
  hubUrlAllowed,
  MAX_FRAME_BYTES,
  MAX_HELLO_LICENSES,
  normalizeHubUrl,
  roundDoneSchema,
  type HubMessage,
  type RoundDone,
} from "../common/hub-protocol.ts";
import { ReconnectingSocket, type SocketConnection } from "../common/reconnecting-socket.ts";
import { ownSignedAnswer, type SignedReply } from "../common/signed-answer.ts";
import { AttestationSigner } from "./attestation-signer.ts";
import { ConditionSigner } from "./condition-signer.ts";
import { expectedHubName, hubUrlsOf, type NodeConfig } from "./config.ts";
import type { NodeMetrics } from "./health.ts";
import { PinnedReaders } from "../chains/pinned-readers.ts";
import { refusal, type SigningOptions } from "./signing-rules.ts";
import type { PeerRounds } from "./monitor/peer-rounds.ts";

// The node's L2 head time is reused this long: about half an L2 block, well within the skew tolerance.
const L2_HEAD_TIME_TTL_MS = 1_000;

export interface HubClientOptions {
  /** The hub's URLs (several instances or addresses of one hub), tried in turn. */
  urls: readonly string[];
  /** The name the hub must give in its challenge (`expectedHubName`); a challenge naming another is not signed. */
  hubName: string;
  chainId: bigint;
  wallet: Pick<Wallet, "address" | "signMessage" | "signTypedData">;
  signer: Pick<AttestationSigner, "answer">;
  /** Answers the hub's condition requests; without it, each is refused (a node built before conditions). */
  conditionSigner?: Pick<ConditionSigner, "answer">;
  /** The licenses the node operates, named in its hello (the hub reads only these); the first 256 are sent. */
  licenses: () => readonly bigint[];
  logger: Logger;
  /** Told when the hub admits the node or the connection closes, and of each request's outcome. */
  onAdmitted?: (admitted: boolean) => void;
  onAnswered?: (outcome: "signed" | "refused", kind: "balance" | "condition") => void;
  /** Told of each answer the node signed and sent, under its round's id. */
  onSigned?: (id: string, answer: SignedReply) => void;
  /** Told of each round result the hub sends (already checked against `roundDoneSchema`). */
  onRoundDone?: (done: RoundDone) => void;
  /** Reconnect delays (tests shorten them). */
  firstRetryMs?: number;
  maxRetryMs?: number;
  /** Allows ws:// to a host other than loopback (`ATTESTATION_HUB_ALLOW_INSECURE`). */
  allowInsecure?: boolean;
}

/**
 * The node's one outbound WebSocket to the API's attestation hub (the node opens no port). It answers the
 * login challenge with its burner key only when the challenge names the hub it expects and its own L2
 * chain, signing the URL it dialled with it (a relay forwarding the real hub's challenge gets a login the
 * real hub refuses) and naming its licenses; then it answers balance requests through `signer` and
 * condition requests through `conditionSigner`. When a connection closes or fails, the next URL of `urls`
 * is tried after the services' one backoff (`ReconnectingSocket`: 0.5 s doubling to 30 s, reset once
 * admitted), as the node's L2 subscription is.
 * Throws when a URL is ws:// to another machine without `allowInsecure`. Returns stop.
 */
export function connectToHub(options: HubClientOptions): () => Promise<void> {
  const logger = options.logger.child({ component: "hub-client" });
  if (options.urls.length === 0) throw new Error("no attestation hub URL");
  const urls = options.urls.map((url) => {
    const normalized = normalizeHubUrl(url);
    if (normalized === undefined || !/^wss?:$/.test(new URL(normalized).protocol)) throw new Error("not a ws:// or wss:// hub URL");
    if (!hubUrlAllowed(normalized, options.allowInsecure ?? false))
      throw new Error(`${new URL(normalized).origin}: ws:// only to a loopback host (allowInsecure for another)`);
    return normalized;
  });
  let admitted = false;
  const socket: ReconnectingSocket = new ReconnectingSocket({
    urls,
    firstRetryMs: options.firstRetryMs,
    maxRetryMs: options.maxRetryMs,
    // The hub's frames are bounded (MAX_FRAME_BYTES): a larger one is a hub to stop reading.
    maxPayloadBytes: MAX_FRAME_BYTES,
    onMessage: (text, connection) => onMessage(text, connection),
    onClose: ({ url, code, reason, retryInMs }) => {
      admitted = false;
      options.onAdmitted?.(false);
      logger.warn(
        { hub: urlOrigin(url), code, reason: reason || undefined, reconnectInSeconds: (retryInMs ?? 0) / 1000 },
        "the attestation hub connection closed; reconnecting",
      );
    },
  });
  const onMessage = (text: string, connection: SocketConnection) => {
    const { url } = connection;
    const hub = urlOrigin(url);
    const send = (message: unknown) => connection.send(message);
    let message: HubMessage;
    try {
      message = JSON.parse(text) as HubMessage;
    } catch {
      return;
    }
    if (typeof message !== "object" || message === null) return; // the hub is not trusted: `null` is no frame
    if (message.type === "challenge") {
      if (message.chainId !== options.chainId.toString()) {
        logger.error(
          { hub, hubChainId: String(message.chainId), chainId: String(options.chainId) },
          "the hub's challenge names another L2 chain: not logging in",
        );
        return connection.close(1000);
      }
      if (message.hub !== options.hubName) {
        logger.error(
          { hub, hubName: String(message.hub).slice(0, 200), expected: options.hubName },
          "the challenge names another hub: not logging in",
        );
        return connection.close(1000);
      }
      const licenseIds = options.licenses().slice(0, MAX_HELLO_LICENSES).map(String);
      if (licenseIds.length === 0) {
        logger.warn({ hub }, "no license to name in the hub login yet");
        return connection.close(1000);
      }
      void options.wallet
        .signMessage(challengeText(message.hub, message.chainId, url, message.nonce))
        .then((signature) => send({ type: "hello", burner: options.wallet.address, url, licenseIds, signature }));
    } else if (message.type === "welcome" && Array.isArray(message.licenseIds)) {
      socket.healthy();
      admitted = true;
      options.onAdmitted?.(true);
      logger.info({ hub, licenses: message.licenseIds.map(String) }, "admitted by the attestation hub");
    } else if (message.type === "attest" || message.type === "attestCondition") {
      const kind = message.type === "attest" ? "balance" : "condition";
      const answering =
        message.type === "attest"
          ? options.signer.answer(message)
          : (options.conditionSigner?.answer(message) ?? Promise.resolve(refusal(message.id, "this node does not sign conditions")));
      void answering.then(
        (reply) => {
          options.onAnswered?.(reply.type === "refusal" ? "refused" : "signed", kind);
          send(reply);
          if (reply.type !== "refusal") options.onSigned?.(message.id, reply);
        },
        (error: unknown) => {
          logger.warn({ requestId: message.id, kind, error: (error as Error)?.name ?? "error" }, "attestation failed");
          options.onAnswered?.("refused", kind);
          send(refusal(message.id, "internal error"));
        },
      );
    } else if (message.type === "roundDone") {
      // It carries other nodes' signatures: checked on arrival, each signature recovered by the receiver.
      const parsed = roundDoneSchema.safeParse(message);
      if (parsed.success) options.onRoundDone?.(parsed.data);
      else logger.warn({ hub }, "a malformed round result from the hub: ignored");
    }
  };
  socket.start();
  return async () => {
    socket.stop();
    if (admitted) options.onAdmitted?.(false);
    admitted = false;
  };
}

/**
 * The timestamp of the latest L2 block read through `provider()` (the node's current L2 endpoint), what
 * the signer checks the hub's issue time against. One read is shared by every caller while it is pending
 * and reused for `maxAgeMs` after, so a burst of attestation requests costs one RPC call; `{ fresh: true }`
 * reads again unless a read is pending. A failed read is not kept (`onError` moves to the next L2 URL).
 */
export function l2HeadTimeReader(
  provider: () => Pick<Provider, "getBlock">,
  options: { maxAgeMs?: number; onError?: () => void } = {},
): (read?: { fresh?: boolean }) => Promise<bigint> {
  const maxAgeMs = options.maxAgeMs ?? L2_HEAD_TIME_TTL_MS;
  let cached: { at: number; time: Promise<bigint>; settled: boolean } | undefined;
  return (read = {}) => {
    // A read in flight is shared even when `fresh` is asked: it was sent after the view being replaced.
    if (cached !== undefined && (!cached.settled || (read.fresh !== true && Date.now() - cached.at < maxAgeMs))) return cached.time;
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
    /** Tallies the peers seen in the rounds' results (the QoS monitor's); absent, results are ignored. */
    peers?: Pick<PeerRounds, "signed" | "done">;
  },
): (() => Promise<void>) | undefined {
  const urls = hubUrlsOf(config);
  if (urls.length === 0 || config.ATTESTATION_VERIFIER === undefined) return undefined;
  const pinned = new PinnedReaders(
    node.evmRpc,
    createFailoverTransport({ urls: config.SOLANA_RPC_URLS, timeoutMs: config.UPSTREAM_TIMEOUT_MS }),
  );
  // One set of rules for both kinds of signature: the same key, domain, licenses and tolerances.
  const rules: SigningOptions = {
    wallet: node.wallet,
    domain: attestationDomain(node.chainId, config.ATTESTATION_VERIFIER),
    evmHead: () => node.evm.latestBlock(),
    licenses: node.licenses,
    maxBlockLag: config.ATTESTATION_MAX_BLOCK_LAG,
    l2HeadTime: l2HeadTimeReader(node.l2, { onError: node.onL2Error }),
    maxClockSkewSeconds: config.ATTESTATION_MAX_CLOCK_SKEW_SECONDS,
  };
  const signer = new AttestationSigner({ ...rules, pinned });
  const conditionSigner = new ConditionSigner({ ...rules, pinned });
  return connectToHub({
    urls,
    hubName: expectedHubName(config, node.chainId),
    chainId: node.chainId,
    wallet: node.wallet,
    signer,
    conditionSigner,
    licenses: node.licenses,
    allowInsecure: config.ATTESTATION_HUB_ALLOW_INSECURE,
    logger: node.logger,
    onAdmitted: (admitted) => node.metrics.hubConnected.set(admitted ? 1 : 0),
    onAnswered: (outcome, kind) => node.metrics.attestations.inc({ outcome, kind }),
    onSigned: (id, answer) => node.peers?.signed(id, ownSignedAnswer(rules.domain, answer)),
    onRoundDone: (done) => void node.peers?.done(done),
  });
}
