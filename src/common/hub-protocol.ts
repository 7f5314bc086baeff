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
  protocol: 4400,
  shuttingDown: 1001,
} as const;

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

/**
 * The text a node signs (EIP-191 personal message) to log in. It names its purpose, the hub and the L2
 * chain, so the signature is good for nothing else (not a transaction, not a typed-data attestation, not
 * another hub or chain), and a fresh random nonce, so an answer recorded once cannot be replayed.
 */
export function challengeText(hub: string, chainId: string, nonce: string): string {
  return `Asset Verification Network: attestation hub login\nhub: ${hub}\nL2 chain: ${chainId}\nnonce: ${nonce}`;
}

/** The burner that signed the challenge, or undefined when the signature is malformed. */
export function challengeSigner(hub: string, chainId: string, nonce: string, signature: string): string | undefined {
  try {
    return getAddress(verifyMessage(challengeText(hub, chainId, nonce), signature));
  } catch {
    return undefined;
  }
}
