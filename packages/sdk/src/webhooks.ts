import { verifyWebhook as verifySignature } from "@avn/protocol/webhook-signature";
import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import type { WebhookChain } from "@avn/protocol/webhook-wire";

import { parseJsonExact } from "./json.ts";

/** A delivery's body (docs/webhooks.md), integers exact. */
export interface WebhookEvent {
  /** The delivery's id: the same on every retry and replay, so a receiver handles each once. */
  id: string;
  subscriptionId: string;
  chain: WebhookChain;
  owner: string;
  asset: string;
  tokenId?: string;
  balance: bigint;
  previousBalance: bigint;
  /** The Ethereum block or Solana slot the balance was read at. */
  block: bigint;
  blockHash?: string;
  /** True when a reorg undid the change delivered before: `balance` is the winning chain's. */
  correction: boolean;
  observedAt: string;
  /** With `attest: true`: the quorum's signed `BalanceAttestation` of the holding at `block` (`verifyAttestation` checks it). */
  attestation?: AttestationJson;
}

/**
 * Checks a delivery's `Avn-Signature` header against the subscription's secret and returns the event it
 * carries. Pass the body exactly as received (the raw text or bytes, before any JSON parsing: a body changed by
 * one byte is refused). Throws a `WebhookSignatureError` (`reason`: missing, malformed, stale, mismatch) for a
 * forged signature, or one older or newer than `toleranceSeconds` (default 300) by this machine's clock.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  toleranceSeconds = 300,
): WebhookEvent {
  verifySignature(body, header, secret, toleranceSeconds);
  const json = parseJsonExact(typeof body === "string" ? body : new TextDecoder().decode(body)) as Record<string, unknown>;
  const exact = (value: unknown) => BigInt(value as number | bigint);
  const event: WebhookEvent = {
    id: String(json.id),
    subscriptionId: String(json.subscriptionId),
    chain: json.chain as WebhookChain,
    owner: String(json.owner),
    asset: String(json.asset),
    balance: exact(json.balance),
    previousBalance: exact(json.previousBalance),
    block: exact(json.block),
    correction: json.correction === true,
    observedAt: String(json.observedAt),
  };
  if (typeof json.token_id === "string") event.tokenId = json.token_id;
  if (typeof json.blockHash === "string") event.blockHash = json.blockHash;
  if (typeof json.attestation === "object" && json.attestation !== null) event.attestation = json.attestation as AttestationJson;
  return event;
}
