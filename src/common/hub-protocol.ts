import { getAddress, isAddress, verifyMessage } from "ethers";
import { z } from "zod";

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

/** Hub → node. */
export type HubMessage =
  | { type: "challenge"; hub: string; chainId: string; nonce: string }
  | { type: "welcome"; licenseIds: string[] }
  | { type: "attest"; id: string; chain: number; owner: string; asset: string; sourceBlock: string; issuedAt: string };

const decimal = z.string().regex(/^\d{1,78}$/);
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);

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
  z.object({
    type: z.literal("attestation"),
    id: z.string().max(64),
    message: z.object({
      chain: z.enum(["0", "1"]),
      owner: hex32,
      asset: hex32,
      balance: decimal,
      queryResultHash: hex32,
      sourceBlock: decimal,
      issuedAt: decimal,
    }),
    licenseIds: z.array(decimal).min(1).max(256),
    signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/),
  }),
  z.object({ type: z.literal("refusal"), id: z.string().max(64), reason: z.string().max(200) }),
]);
export type NodeMessage = z.infer<typeof nodeMessageSchema>;

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
