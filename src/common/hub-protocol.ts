import { getAddress, isAddress, verifyMessage } from "ethers";
import { z } from "zod";

import { MAX_ATTESTATION_LICENSES } from "@avn/protocol/attestation";
// The kinds' own checks of decimal integers: a license id, a balance (`decimal`); a position, an issue time (`uint64`).
import { balanceKind, conditionKind, decimal, uint64, type AttestationKind } from "@avn/protocol/attestation-kinds";
import { MAX_CONDITION_LEAVES, type ConditionRequest } from "@avn/protocol/conditions";

/**
 * The attestation hub's wire protocol: JSON text frames over one WebSocket that each circuit node opens
 * to the API (`/attest/ws`; nodes accept no connection). Shared by the hub and the node so the two
 * cannot drift. docs/api.md ("The hub") describes the exchange. It lives in src/common because both
 * services import it (the node's container image carries src/common with src/node and src/chains).
 */
export const HUB_PATH = "/attest/ws";
/** Close codes (4000–4999 are free for applications): the node logs the reason and reconnects later. */
export const CLOSE_CODE = {
  authFailed: 4401,
  notOperator: 4403,
  replaced: 4409,
  licensesLost: 4410,
  /** The hello signs a URL that is not one of the hub's public URLs (a relay's, or a misconfigured one). */
  wrongUrl: 4421,
  /** Too many logins being checked right now: try again after the backoff. */
  tryLater: 4429,
  protocol: 4400,
  shuttingDown: 1001,
} as const;
/** Most license ids one hello names (as many as one attestation signature may carry). */
export const MAX_HELLO_LICENSES = 256;
/**
 * Largest frame after login, either way: a node's signed answer with its license list, and the hub's
 * requests. The largest request is a condition's: 16 leaves with every field at its longest (ERC-1155
 * leaves with a 78-digit token id, min and max, counting delegations), each under four `atLeast` (the longest
 * way to nest 4 deep), both owners and the link: 7,374 bytes. A node's condition answer with 16 licenses of 78 digits
 * is 1,825 (test/ts/attestation/ConditionAttestation.ts builds both and checks they stay under half of this)
 * before its evidence: what it read travels beside the signature when the frame still fits, and is left out
 * when it would not (`withEvidence`; the API then reads the source itself). A round's result (`roundDone`)
 * is cut to fit by the hub.
 */
export const MAX_FRAME_BYTES = 16 * 1024;
/**
 * The longest a round stays open (`ATTESTATION_DEADLINE_MS` is at most this): past it, a round, an answer
 * or a result is worth nothing, which bounds how long a captured one can be replayed, and how long a node
 * keeps what it signed waiting for the round's result.
 */
export const MAX_ROUND_DEADLINE_MS = 60_000;

export interface AttestQuery {
  /** 0 Ethereum, 1 Solana (`AttestedChain`). */
  chain: 0 | 1;
  /** EVM address (0x…) or Solana base58 public key, as the client sent it (validated by the API). */
  owner: string;
  asset: string;
  /** The pinned position: an Ethereum block, or the minimum Solana slot. */
  sourceBlock: bigint;
  /** Seconds since the epoch, pinned by the hub. */
  issuedAt: bigint;
}

/** A condition as a round asks it: the request in its normal form as the API parsed it, without `reveal` (nodes sign no balances). */
export type ConditionFrameRequest = Pick<ConditionRequest, "owners" | "condition" | "links">;

/**
 * A condition round's question: the request and the pinned positions (0 for a chain without leaves). The
 * verdict is not asked: each node reads every leaf and signs the verdict it finds, and the hub groups the
 * structs as it groups balances.
 */
export interface ConditionQuery {
  request: ConditionFrameRequest;
  /** The Ethereum block every Ethereum leaf is read at; 0 when the condition has none. */
  ethereumBlock: bigint;
  /** The minimum Solana slot every Solana leaf is read at; 0 when the condition has none. */
  solanaSlot: bigint;
  /** Seconds since the epoch, pinned by the hub (the L2 head's timestamp). */
  issuedAt: bigint;
}

/**
 * Hub → each node whose signature is on a round's winning struct, once the round is over: every signature of
 * that struct the hub counted (the quorum's, agreeing ones beyond it, and late ones), each with the time from
 * the request to its arrival at the hub, fastest first. No struct travels: a node checks each signature
 * over the struct it signed itself (docs/verification.md, "Its peers, through the hub's rounds").
 */
export interface RoundDone {
  type: "roundDone";
  /** The round's id, as in its request. */
  id: string;
  signatures: Array<{ licenseIds: string[]; signature: string; elapsedMs: number }>;
  /**
   * True when the hub left signatures out (more than fit one frame): a license absent from the list may then
   * have signed, so the node counts nobody as absent from this round.
   */
  truncated: boolean;
}
/** The most signatures one `roundDone` lists (the hub keeps the fastest, and fewer when they do not fit a frame). */
export const MAX_DONE_SIGNATURES = 40;

/** Hub → node. */
export type HubMessage =
  | RoundDone
  | { type: "challenge"; hub: string; chainId: string; nonce: string }
  | { type: "welcome"; licenseIds: string[] }
  | { type: "attest"; id: string; chain: number; owner: string; asset: string; sourceBlock: string; issuedAt: string }
  | {
      type: "attestCondition";
      id: string;
      request: ConditionFrameRequest;
      ethereumBlock: string;
      solanaSlot: string;
      issuedAt: string;
    };

const roundId = z.string().max(64);
const nodeSignature = z.string().regex(/^0x[0-9a-fA-F]{130}$/);

/** A round's result, as a node checks it on arrival (the hub is not trusted: every signature is recovered again). */
export const roundDoneSchema = z.strictObject({
  type: z.literal("roundDone"),
  id: roundId,
  signatures: z
    .array(
      z.strictObject({
        licenseIds: z.array(decimal).min(1).max(MAX_ATTESTATION_LICENSES),
        signature: nodeSignature,
        elapsedMs: z.number().int().min(0).max(MAX_ROUND_DEADLINE_MS),
      }),
    )
    .min(1)
    .max(MAX_DONE_SIGNATURES),
  truncated: z.boolean(),
});

/**
 * The hub's requests, as a node (and an instance relaying another's round) checks them on arrival: the hub
 * is not trusted. A condition's `request` is checked here for its shape only (no key but these three);
 * the node parses it again with `parseConditionRequest` and requires it in its normal form.
 */
export const attestRequestSchema = z.object({
  type: z.literal("attest"),
  id: roundId,
  chain: z.union([z.literal(0), z.literal(1)]),
  owner: z.string().max(64),
  asset: z.string().max(64),
  sourceBlock: uint64,
  issuedAt: uint64,
});
export const attestConditionRequestSchema = z.object({
  type: z.literal("attestCondition"),
  id: roundId,
  request: z.strictObject({ owners: z.unknown(), condition: z.unknown(), links: z.unknown().optional() }),
  ethereumBlock: uint64,
  solanaSlot: uint64,
  issuedAt: uint64,
});
/** A round's request (either kind), as the hub sends it to its nodes and relays it to the other instances. */
export const roundRequestSchema = z.discriminatedUnion("type", [attestRequestSchema, attestConditionRequestSchema]);

/**
 * A QueryResult's bytes as the API writes them (`0x` + hex for an EVM word, bare lower-case hex for Solana
 * accounts' data). A frame is at most MAX_FRAME_BYTES, which bounds them; a node whose bytes would not fit
 * sends its signature without them (`withEvidence`), and the API then reads the source itself.
 */
const queryResultBytes = z.string().regex(/^(0x)?([0-9a-fA-F]{2})*$/);
/**
 * What a node read, sent beside its signature so the answer travels once: the API serves these, checked
 * against the signed struct (rounds.ts), instead of reading the source itself. Not signed: the signature
 * covers the struct, and the check ties these to it (a balance's bytes hash to its `queryResultHash`; a
 * condition's readings evaluate to its verdict).
 */
export const balanceEvidenceSchema = z.strictObject({ queryResult: queryResultBytes });
export const conditionEvidenceSchema = z.strictObject({
  leaves: z
    .array(z.strictObject({ balance: decimal, queryResult: queryResultBytes }))
    .min(1)
    .max(MAX_CONDITION_LEAVES),
});

/**
 * A node's signed answer of `kind`, as the hub reads it: the kind's own message schema (the one the API's
 * `data.attestation.message` is documented and checked with), the node's license list, its signature, and
 * what it read. Built from the kind, so a field added to a kind's schema is parsed here with no other edit.
 */
export function signedAnswerSchema<Frame extends string, Message, Evidence extends z.ZodType>(
  kind: Pick<AttestationKind<unknown, Message, Frame>, "frameType" | "messageSchema">,
  evidence: Evidence,
) {
  return z.object({
    type: z.literal(kind.frameType),
    id: roundId,
    message: kind.messageSchema,
    licenseIds: z.array(decimal).min(1).max(MAX_HELLO_LICENSES),
    signature: nodeSignature,
    evidence: evidence.optional(),
  });
}

/** The longest refusal reason a node may send (a longer one is a malformed frame, which closes the connection). */
export const MAX_REFUSAL_REASON = 200;

/** Node → hub, validated on arrival; anything else closes the connection. */
export const nodeMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("hello"),
    burner: z.string().refine((value) => isAddress(value)),
    /** The hub URL the node dialled, as signed in the challenge text. */
    url: z.string().max(2_048),
    /** The licenses the node operates: the hub reads these (`operatorOf`, `isLive`), never scans the registry. */
    licenseIds: z
      .array(decimal)
      .min(1)
      .max(MAX_HELLO_LICENSES)
      .refine((ids) => new Set(ids.map((id) => BigInt(id))).size === ids.length, "duplicate license id"),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/),
  }),
  signedAnswerSchema(balanceKind, balanceEvidenceSchema),
  signedAnswerSchema(conditionKind, conditionEvidenceSchema),
  z.object({ type: z.literal("refusal"), id: roundId, reason: z.string().max(MAX_REFUSAL_REASON) }),
]);
export type NodeMessage = z.infer<typeof nodeMessageSchema>;
/** A node's answer to a round: a signature of either kind, or a refusal. */
export type NodeAnswer = Extract<NodeMessage, { type: "attestation" | "conditionAttestation" | "refusal" }>;
/** A node's signed answer (either kind). */
export type SignedAnswer = Exclude<NodeAnswer, { type: "refusal" }>;

/**
 * A signed answer as the node sends it: with its evidence when the frame stays within MAX_FRAME_BYTES, else
 * without (the hub's socket would close on a larger frame; the API reads the source itself then).
 */
export function withEvidence<Answer extends SignedAnswer>(answer: Answer): Answer {
  if (Buffer.byteLength(JSON.stringify(answer)) <= MAX_FRAME_BYTES) return answer;
  const { evidence: _tooLarge, ...signed } = answer;
  return signed as Answer;
}

/** The hub's request of round kind `type` (`attest`, `attestCondition`). */
export type RoundRequestOf<Type extends "attest" | "attestCondition"> = Extract<HubMessage, { type: Type }>;
/** A node's signed answer carried by frame `type` (`attestation`, `conditionAttestation`). */
export type SignedAnswerOf<Type extends SignedAnswer["type"]> = Extract<SignedAnswer, { type: Type }>;

/** Parses a node's frame; undefined when it is not JSON or not one of the messages above. */
export function parseNodeMessage(raw: string): NodeMessage | undefined {
  try {
    const parsed = nodeMessageSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The label a hub uses when none is configured (`ATTESTATION_HUB_LABEL` of the API and of the node). */
export const DEFAULT_HUB_LABEL = "main";

/**
 * A hub's name, unique per deployment: its label and what the deployment pins already, the L2 chain id and
 * the AttestationVerifier address (EIP-55). The name is in every challenge, and a node refuses a challenge
 * naming another hub, so a login cannot be carried to another deployment's hub (or another label's).
 */
export function hubName(label: string, chainId: bigint | string, attestationVerifier: string): string {
  return `avn-hub/${label}/eip155:${chainId.toString()}/${getAddress(attestationVerifier)}`;
}

/**
 * The text a node signs (EIP-191 personal message) to log in. It names its purpose, the hub and the L2
 * chain, so the signature is good for nothing else (not a transaction, not a typed-data attestation, not
 * another hub or chain); the URL the node dialled, so a relay that forwards the real hub's challenge gets
 * a login signed for its own URL, which the real hub refuses; and a fresh random nonce, so an answer
 * recorded once cannot be replayed. `url` is normalized (`normalizeHubUrl`) on both sides.
 */
export function challengeText(hub: string, chainId: string, url: string, nonce: string): string {
  return `Asset Verification Network: attestation hub login\nhub: ${hub}\nL2 chain: ${chainId}\nurl: ${url}\nnonce: ${nonce}`;
}

/** The burner that signed the challenge, or undefined when the signature is malformed. */
export function challengeSigner(hub: string, chainId: string, url: string, nonce: string, signature: string): string | undefined {
  try {
    return getAddress(verifyMessage(challengeText(hub, chainId, url, nonce), signature));
  } catch {
    return undefined;
  }
}

/** A hub URL as both sides sign and compare it (`new URL().href`: lowercase host, default port dropped); undefined when not a URL. */
export function normalizeHubUrl(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

/** Whether `hostname` (as `URL.hostname` gives it) is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** Whether a node may dial `url`: wss://, or ws:// to a loopback host, or ws:// anywhere when `allowInsecure`. */
export function hubUrlAllowed(url: string, allowInsecure: boolean): boolean {
  const parsed = new URL(url);
  return parsed.protocol === "wss:" || allowInsecure || isLoopbackHost(parsed.hostname);
}
