import { z } from "zod/mini";

import {
  AttestedChain,
  BALANCE_ATTESTATION_TYPE,
  LICENSED_BALANCE_ATTESTATION_TYPES,
  SIGNED_PRIMARY_TYPE,
  type BalanceAttestation,
} from "./attestation.ts";
import {
  CONDITION_ATTESTATION_TYPE,
  CONDITION_SIGNED_PRIMARY_TYPE,
  LICENSED_CONDITION_ATTESTATION_TYPES,
  type ConditionAttestation,
} from "./conditions.ts";

/**
 * One descriptor per kind of signed answer: what a node signs, how it travels as JSON (in the node's frame
 * and in the API's `data.attestation.message`) and is checked there, and its EIP-712 definition. The node,
 * the hub, the API and the SDK drive every kind through these, so a kind is written once: adding one is a
 * new descriptor (and its tests), not a new file on every floor. Hashing, signing and recovery are the
 * same for every kind and live beside their library (ethers in the services' `src/common/attestation.ts`,
 * viem in the SDK).
 */
export interface AttestationKind<Struct, Message, Frame extends string = string> {
  /** The kind's name in logs and metrics. */
  readonly name: "balance" | "condition";
  /** The node frame (`NodeMessage.type`) that carries a signature of this kind. */
  readonly frameType: Frame;
  /** The signed struct's EIP-712 name and type string (`BalanceAttestation(uint8 chain,…)`). */
  readonly structName: "BalanceAttestation" | "ConditionAttestation";
  readonly structType: string;
  /** What a node signs: `{attestation, licenseIds}` (viem's `primaryType`), with its types. */
  readonly primaryType: string;
  readonly types: Readonly<Record<string, ReadonlyArray<{ readonly name: string; readonly type: string }>>>;
  /** The struct as JSON (integers as decimal strings), checked on arrival at the hub and by clients. */
  readonly messageSchema: z.ZodMiniType<Message>;
  toMessage(struct: Struct): Message;
  /** The struct of a checked message; bytes32 fields in lower-case hex, one spelling to compare. */
  fromMessage(message: Message): Struct;
  /** The chain time the struct was issued at (seconds): the epoch it counts in, its age. */
  issuedAt(struct: Struct): bigint;
}

/** Any kind, for code that drives them all alike. */
export type AnyAttestationKind = typeof balanceKind | typeof conditionKind;

// zod/mini: the SDK bundles these schemas into browser builds, and the classic API would triple its size.
// Each check names what is expected, which the SDK's errors repeat.
const bytes32 = z
  .string("must be 0x followed by 64 hexadecimal digits")
  .check(z.regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x followed by 64 hexadecimal digits"));
/** A `uint256` as a decimal string (a balance, a license id): how the wire writes integers a JSON number cannot hold. */
export const decimal = z.string("must be a uint256, written as a decimal string").check(
  z.regex(/^\d{1,78}$/, "must be a uint256, written as a decimal string"),
  // Checks go on after a failed one: the range is read only of digits.
  z.refine((value) => !/^\d+$/.test(value) || BigInt(value) < 2n ** 256n, "must be a uint256, written as a decimal string"),
);
/** A position or an issue time: a `uint64`, as a decimal string. */
export const uint64 = z.string("must be a uint64, written as a decimal string").check(
  z.regex(/^\d{1,20}$/, "must be a uint64, written as a decimal string"),
  z.refine((value) => !/^\d+$/.test(value) || BigInt(value) < 2n ** 64n, "must be a uint64, written as a decimal string"),
);

/** `BalanceAttestation` as JSON. */
export const balanceMessageSchema = z.object({
  chain: z.enum(["0", "1"], 'must be "0" (Ethereum) or "1" (Solana)'),
  owner: bytes32,
  asset: bytes32,
  balance: decimal,
  queryResultHash: bytes32,
  sourceBlock: uint64,
  issuedAt: uint64,
});
export type BalanceMessage = z.infer<typeof balanceMessageSchema>;

/** `ConditionAttestation` as JSON; the verdict a JSON boolean only (the string "false" is truthy). */
export const conditionMessageSchema = z.object({
  conditionHash: bytes32.check(z.describe("keccak-256 of the condition's RFC 8785 JSON in its normal form (data.conditionHash)")),
  ownersHash: bytes32.check(z.describe("keccak-256 of abi.encode(bytes32 ethereumOwner, bytes32 solanaOwner) (data.ownersHash)")),
  verdict: z.boolean("must be a JSON boolean"),
  ethereumBlock: uint64.check(z.describe("The block every Ethereum leaf was read at (0 without one)")),
  solanaSlot: uint64.check(z.describe("The slot every Solana leaf was read at or after (0 without one)")),
  issuedAt: uint64.check(z.describe("The timestamp of the latest L2 block the hub knew")),
});
export type ConditionMessage = z.infer<typeof conditionMessageSchema>;

const address = z.string("must be an address").check(z.regex(/^0x[0-9a-fA-F]{40}$/, "must be an address"));

/** `data.attestation.domain`: the EIP-712 domain, as viem's and ethers' typed-data verification take it. */
export const attestationDomainSchema = z.object(
  {
    name: z.string("must be a string"),
    version: z.string("must be a string"),
    chainId: z.int("must be a uint256, written as a JSON integer").check(z.minimum(1, "must be a uint256, written as a JSON integer")),
    verifyingContract: address,
  },
  "must be an object",
);

/** One node's signature in `data.attestation.signatures`: over the message and its own `licenseIds`, in this order. */
export const nodeSignatureSchema = z.object(
  {
    signer: address,
    licenseIds: z.array(decimal, "must be an array").check(z.minLength(1, "must name a license")),
    signature: z.string("must be 0x-prefixed hex").check(z.regex(/^0x([0-9a-fA-F]{2})*$/, "must be 0x-prefixed hex")),
  },
  "must be an object",
);

/**
 * `data.attestation` of a kind, as the API serves it and clients read it: its domain, its struct as JSON,
 * the signatures. One schema for the API's response schema (`/openapi.json`), the SDK's checks and types;
 * the hub reads the nodes' frames with the same message schema (`src/common/hub-protocol.ts`).
 */
export function attestationJsonSchema<Message>(kind: Pick<AttestationKind<unknown, Message>, "messageSchema">) {
  return z.object(
    { domain: attestationDomainSchema, message: kind.messageSchema, signatures: z.array(nodeSignatureSchema, "must be an array") },
    "must be an object",
  );
}

/** A balance, as `POST /api/ccq-evm` / `ccq-svm` `?attest=true` answer it. */
export const balanceKind: AttestationKind<BalanceAttestation, BalanceMessage, "attestation"> = {
  name: "balance",
  frameType: "attestation",
  structName: "BalanceAttestation",
  structType: BALANCE_ATTESTATION_TYPE,
  primaryType: SIGNED_PRIMARY_TYPE,
  types: LICENSED_BALANCE_ATTESTATION_TYPES,
  messageSchema: balanceMessageSchema,
  toMessage: (attestation) => ({
    chain: String(attestation.chain) as BalanceMessage["chain"],
    owner: attestation.owner,
    asset: attestation.asset,
    balance: attestation.balance.toString(),
    queryResultHash: attestation.queryResultHash,
    sourceBlock: attestation.sourceBlock.toString(),
    issuedAt: attestation.issuedAt.toString(),
  }),
  fromMessage: (message) => {
    const chain = Number(message.chain);
    if (chain !== AttestedChain.ethereum && chain !== AttestedChain.solana) throw new Error(`unknown attested chain ${message.chain}`);
    return {
      chain,
      owner: message.owner.toLowerCase(),
      asset: message.asset.toLowerCase(),
      balance: BigInt(message.balance),
      queryResultHash: message.queryResultHash.toLowerCase(),
      sourceBlock: BigInt(message.sourceBlock),
      issuedAt: BigInt(message.issuedAt),
    };
  },
  issuedAt: (attestation) => attestation.issuedAt,
};

/** A signed verdict over a holding condition, as `POST /api/conditions?attest=true` answers it. */
export const conditionKind: AttestationKind<ConditionAttestation, ConditionMessage, "conditionAttestation"> = {
  name: "condition",
  frameType: "conditionAttestation",
  structName: "ConditionAttestation",
  structType: CONDITION_ATTESTATION_TYPE,
  primaryType: CONDITION_SIGNED_PRIMARY_TYPE,
  types: LICENSED_CONDITION_ATTESTATION_TYPES,
  messageSchema: conditionMessageSchema,
  toMessage: (attestation) => ({
    conditionHash: attestation.conditionHash.toLowerCase(),
    ownersHash: attestation.ownersHash.toLowerCase(),
    verdict: attestation.verdict,
    ethereumBlock: attestation.ethereumBlock.toString(),
    solanaSlot: attestation.solanaSlot.toString(),
    issuedAt: attestation.issuedAt.toString(),
  }),
  fromMessage: (message) => {
    // Checked by the schema where a message arrives; here too, for a caller that built one by hand.
    if (typeof message.verdict !== "boolean") throw new TypeError("the verdict must be a JSON boolean");
    return {
      conditionHash: message.conditionHash.toLowerCase(),
      ownersHash: message.ownersHash.toLowerCase(),
      verdict: message.verdict,
      ethereumBlock: BigInt(message.ethereumBlock),
      solanaSlot: BigInt(message.solanaSlot),
      issuedAt: BigInt(message.issuedAt),
    };
  },
  issuedAt: (attestation) => attestation.issuedAt,
};

/** The kinds by the node frame that carries their signatures. */
export const KIND_OF_FRAME = { attestation: balanceKind, conditionAttestation: conditionKind } as const;

/** A balance answer's `data.attestation`. */
export const balanceAttestationJsonSchema = attestationJsonSchema(balanceKind);
export type AttestationJson = z.infer<typeof balanceAttestationJsonSchema>;
/** A verdict's `data.attestation`. */
export const conditionAttestationJsonSchema = attestationJsonSchema(conditionKind);
export type ConditionAttestationJson = z.infer<typeof conditionAttestationJsonSchema>;
