import { SourceChain } from "./constants.ts";

/**
 * The balance attestation: one EIP-712 struct for both source chains, signed by circuit nodes and verified
 * by the `AttestationVerifier` contract. The names and types are pinned (integrations and outside tools
 * rely on them) and a test checks them against the contract's type hash and digest, so the two cannot
 * drift. The node, the API, the web app and the SDK all use these definitions; the
 * signing and recovery with ethers live in the services' `src/common/attestation.ts`.
 */
export const BALANCE_ATTESTATION_TYPE =
  "BalanceAttestation(uint8 chain,bytes32 owner,bytes32 asset,uint256 balance,bytes32 queryResultHash,uint64 sourceBlock,uint64 issuedAt)";

export const BALANCE_ATTESTATION_TYPES = {
  BalanceAttestation: [
    { name: "chain", type: "uint8" },
    { name: "owner", type: "bytes32" },
    { name: "asset", type: "bytes32" },
    { name: "balance", type: "uint256" },
    { name: "queryResultHash", type: "bytes32" },
    { name: "sourceBlock", type: "uint64" },
    { name: "issuedAt", type: "uint64" },
  ],
} as const;

/**
 * What each node signs: the attestation with the ids of the licenses it signs for, in the order its
 * `NodeSignature` lists them. Binding them keeps whoever carries the signatures (the API) from adding a
 * license delegated to a signer without its consent, moving one to another signer, or reordering a list.
 */
export const LICENSED_BALANCE_ATTESTATION_TYPE = `LicensedBalanceAttestation(BalanceAttestation attestation,uint256[] licenseIds)${BALANCE_ATTESTATION_TYPE}`;

export const LICENSED_BALANCE_ATTESTATION_TYPES = {
  LicensedBalanceAttestation: [
    { name: "attestation", type: "BalanceAttestation" },
    { name: "licenseIds", type: "uint256[]" },
  ],
  ...BALANCE_ATTESTATION_TYPES,
} as const;

/** The most licenses one attestation's signatures may name in all (the verifier's `MAX_LICENSES`). */
export const MAX_ATTESTATION_LICENSES = 16;

/**
 * The most seconds an `issuedAt` may lie ahead of the block time for the verifier's views (its
 * `MAX_CLOCK_SKEW`); a node signs no issue time further ahead of its own L2 head than this.
 */
export const MAX_ATTESTATION_CLOCK_SKEW = 4;

/** The primary type a client names to verify a signature (viem's `primaryType`; ethers finds it itself). */
export const SIGNED_PRIMARY_TYPE = "LicensedBalanceAttestation";

/** The EIP-712 domain's name and version (the contract's constructor gets the same two). */
export const ATTESTATION_DOMAIN_NAME = "Asset Verification Network";
export const ATTESTATION_DOMAIN_VERSION = "1";

/** The source chain of an attestation, as the registry numbers them. */
/** Attestations name their source chain as jobs do. */
export const AttestedChain = SourceChain;
export type AttestedChain = SourceChain;

export interface BalanceAttestation {
  chain: AttestedChain;
  /** bytes32: an EVM address left-padded, or a Solana public key's 32 bytes. */
  owner: string;
  /** bytes32: the ERC-20 / ERC-721 contract left-padded, or the mint's 32 bytes. */
  asset: string;
  balance: bigint;
  /** keccak-256 of the QueryResult bytes. */
  queryResultHash: string;
  /** The Ethereum block, or the minimum Solana slot, the answer holds at. */
  sourceBlock: bigint;
  /** Seconds since the epoch. */
  issuedAt: bigint;
}

export interface AttestationDomain {
  name: string;
  version: string;
  chainId: bigint;
  verifyingContract: string;
}

/** One node's signature, for the licenses delegated to it that it signs with. */
export interface NodeSignature {
  signer: string;
  licenseIds: bigint[];
  signature: string;
}
