import type { Wallet } from "ethers";

import { AssetNotFoundError } from "../chains/rpc/errors.ts";
import { MAX_ATTESTATION_CLOCK_SKEW, MAX_ATTESTATION_LICENSES, type AttestationDomain } from "@avn/protocol/attestation";
import type { AttestationKind } from "@avn/protocol/attestation-kinds";
import { signAttestation } from "../common/attestation.ts";
import { MAX_REFUSAL_REASON, withEvidence, type SignedAnswer } from "../common/hub-protocol.ts";

/**
 * The rules every signature a node gives the hub follows, whatever it signs (a balance or a condition's
 * verdict): which licenses it signs for, how far back a pinned Ethereum block may be, how far the hub's
 * issue time may be from the node's own L2 head, and how a refusal reads. One place, so the two signers
 * cannot drift apart on what makes a struct fresh.
 */
export interface SigningOptions {
  wallet: Pick<Wallet, "signTypedData">;
  /** The EIP-712 domain the node builds itself (its L2 chain id, `ATTESTATION_VERIFIER`). */
  domain: AttestationDomain;
  /** The node's own Ethereum head (its source RPCs), to refuse positions too far back. */
  evmHead: () => Promise<bigint>;
  /** The licenses delegated to this node that it signs for. */
  licenses: () => readonly bigint[];
  maxBlockLag: number;
  /**
   * The timestamp of the node's own latest L2 block (its L2 provider; cached about a second, concurrent
   * reads coalesced; `fresh`: not the cached one): the clock the hub's issue time is checked against,
   * since the hub pins the L2 head's.
   */
  l2HeadTime: (options?: { fresh?: boolean }) => Promise<bigint>;
  /**
   * The most seconds the issue time may lie behind `l2HeadTime()` (the two views of the L2 head). Ahead of
   * it, never more than `MAX_ATTESTATION_CLOCK_SKEW` (4 s) whatever this says: see `issueTimeRefusal`.
   */
  maxClockSkewSeconds: number;
}

/**
 * A signer of one kind of round. What every kind does alike is here: a node without a license refuses, and a
 * refusal names the round. The kind's own checks, reads and struct are `sign`'s.
 */
export abstract class RoundSigner<Request extends { id: string }, Answer extends SignedAnswer, Options extends SigningOptions> {
  protected readonly options: Options;

  constructor(options: Options) {
    this.options = options;
  }

  async answer(request: Request): Promise<Answer | Refusal> {
    const refuse = (reason: string): Refusal => refusal(request.id, reason);
    if (this.options.licenses().length === 0) return refuse("no license is delegated to this node");
    return this.sign(request, refuse);
  }

  protected abstract sign(request: Request, refuse: (reason: string) => Refusal): Promise<Answer | Refusal>;
}

export interface Refusal {
  type: "refusal";
  id: string;
  reason: string;
}

/** A refusal of request `id`, its reason cut to what the hub accepts (a longer one would be a malformed frame). */
export function refusal(id: string, reason: string): Refusal {
  return { type: "refusal", id, reason: reason.length > MAX_REFUSAL_REASON ? `${reason.slice(0, MAX_REFUSAL_REASON - 1)}…` : reason };
}

/**
 * The licenses to sign for: unique, in one canonical order (ascending), and no more than one attestation
 * may name. The signature covers the list exactly as it is sent, so nobody can trim or reorder it later.
 */
export function signingLicenses(licenses: readonly bigint[]): bigint[] {
  return [...new Set(licenses)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, MAX_ATTESTATION_LICENSES);
}

/**
 * A signed answer to round `id`: `struct` signed for the licenses the node signs for, as its kind's frame,
 * with what the node read (`evidence`) when the frame stays within the hub's bound. Every kind's answer is
 * built here, so the frames differ only in their struct and evidence.
 */
export async function signedAnswer<Struct, Message, Frame extends SignedAnswer["type"]>(
  kind: AttestationKind<Struct, Message, Frame>,
  options: SigningOptions,
  id: string,
  struct: Struct,
  evidence: Extract<SignedAnswer, { type: Frame }>["evidence"],
): Promise<Extract<SignedAnswer, { type: Frame }>> {
  type Answer = Extract<SignedAnswer, { type: Frame }>;
  const licenseIds = signingLicenses(options.licenses());
  const signature = await signAttestation(kind, options.wallet, options.domain, struct, licenseIds);
  const answer = { type: kind.frameType, id, message: kind.toMessage(struct), licenseIds: licenseIds.map(String), signature, evidence };
  // The kind fixes the message type to its frame's; TypeScript cannot follow that through the generic.
  return withEvidence(answer as unknown as Answer);
}

/** A pinned position or issue time sent as a decimal string, or undefined when it is not a `uint64`. */
export function uint64Of(value: unknown): bigint | undefined {
  if (typeof value !== "string" || !/^\d{1,20}$/.test(value)) return undefined;
  const parsed = BigInt(value);
  return parsed < 2n ** 64n ? parsed : undefined;
}

/**
 * Why `issuedAt` is refused, or undefined when it lies at most `MAX_ATTESTATION_CLOCK_SKEW` (4 s) ahead of
 * the node's own L2 head's timestamp and at most `maxClockSkewSeconds` behind it. Ahead is what a hub
 * could use to pass a reading off as fresher than it is, so it is bounded by what consumers are told:
 * the verifier's views accept an issue time up to 4 s ahead of their block, no more. Behind only makes
 * an answer look older, so there the tolerance covers two views of the head that differ by a few blocks.
 * Before refusing an issue time as too far ahead, the head is read again, not reused: the hub may simply
 * have seen a block that the cached view has not.
 */
export async function issueTimeRefusal(issuedAt: bigint, options: SigningOptions): Promise<string | undefined> {
  const ahead = BigInt(Math.min(MAX_ATTESTATION_CLOCK_SKEW, options.maxClockSkewSeconds));
  const behind = BigInt(options.maxClockSkewSeconds);
  let headTime: bigint;
  try {
    headTime = await options.l2HeadTime();
    if (issuedAt - headTime > ahead) headTime = await options.l2HeadTime({ fresh: true });
  } catch (error) {
    return `the L2 head could not be read (${(error as Error)?.name ?? "error"})`;
  }
  const skew = issuedAt - headTime;
  if (skew > ahead || -skew > behind)
    return `issue time ${issuedAt} is ${skew} s off this node's L2 head (${headTime}): at most ${ahead} s ahead, ${behind} s behind`;
  return undefined;
}

/** Why Ethereum block `block` is refused, or undefined when it is at most `maxBlockLag` below the node's own head. */
export async function blockLagRefusal(block: bigint, options: SigningOptions): Promise<string | undefined> {
  const head = await options.evmHead();
  if (block + BigInt(options.maxBlockLag) < head) return `block ${block} is more than ${options.maxBlockLag} blocks below the head`;
  return undefined;
}

/** A failed source read as a refusal's reason: a missing asset is "not found" (never a zero), anything else by its class. */
export function readFailure(error: unknown): string {
  return error instanceof AssetNotFoundError ? "not found" : `source read failed (${(error as Error)?.name ?? "error"})`;
}
