import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import { DAY } from "../common/units.js";

const RATE_ONE = 10n ** 18n;

/** The default redemption schedule: 15 days → 25%, 180 days → 95%, linear between. */
export const DEFAULT_RATE_SCHEDULE = {
  minPeriod: 15n * DAY,
  maxPeriod: 180n * DAY,
  minRate: (25n * RATE_ONE) / 100n,
  maxRate: (95n * RATE_ONE) / 100n,
} as const;

export interface TokenPairOptions {
  /** Receives the whole primary supply. */
  supplyRecipient: string;
  /** Governs the staked token (the deploying signer must be it when later steps grant roles). */
  admin: string;
  forfeitRecipient: string;
  adminTransferDelay?: bigint;
}

/**
 * Deploys PrimaryToken and StakedToken on one chain with ethers, for tests and benchmarks on a local
 * network (live deployments use the Ignition modules in deploy/).
 */
export async function deployTokenPair(ethers: HardhatEthers, options: TokenPairOptions) {
  const primary = await ethers.deployContract("PrimaryToken", ["Verification Network", "VNT", options.supplyRecipient]);
  const staked = await ethers.deployContract("StakedToken", [
    "Staked Verification Network",
    "sVNT",
    await primary.getAddress(),
    options.admin,
    options.adminTransferDelay ?? 0n,
    DEFAULT_RATE_SCHEDULE,
    options.forfeitRecipient,
  ]);
  return { primary, staked };
}

export interface VerificationOptions {
  /** Admin of the three contracts; must be the deploying signer, which grants the wiring roles. */
  admin: string;
  treasury: string;
  maxSupply: bigint;
  priceTiers: ReadonlyArray<{ upToSupply: bigint; price: bigint }>;
  livenessWindow: bigint;
  epochDuration: bigint;
  requestFee: bigint;
  quorum: bigint;
  jobTimeout: bigint;
}

/**
 * Deploys NodeLicense, NodeRegistry and VerificationRegistry on top of a token pair and wires them as the
 * Protocol Ignition module does: the verification registry gets the staked token's PROTOCOL_ROLE and the
 * node registry's RECORDER_ROLE, the admin gets REWARDS_FUNDER_ROLE, and the attestation verifier gets the
 * verification registry's ATTESTATION_ROLE.
 */
export async function deployVerificationContracts(
  ethers: HardhatEthers,
  tokens: Awaited<ReturnType<typeof deployTokenPair>>,
  options: VerificationOptions,
) {
  const { primary, staked } = tokens;
  const license = await ethers.deployContract("NodeLicense", [
    "Node License",
    "NODE",
    await primary.getAddress(),
    options.treasury,
    options.maxSupply,
    [...options.priceTiers],
    options.admin,
    0n,
  ]);
  const nodeRegistry = await ethers.deployContract("NodeRegistry", [
    await license.getAddress(),
    options.livenessWindow,
    options.quorum,
    options.admin,
    0n,
  ]);
  await license.setNodeRegistry(await nodeRegistry.getAddress());
  const registry = await ethers.deployContract("VerificationRegistry", [
    await staked.getAddress(),
    await nodeRegistry.getAddress(),
    options.epochDuration,
    options.requestFee,
    options.jobTimeout,
    options.admin,
    0n,
  ]);
  const registryAddress = await registry.getAddress();
  await staked.grantRole(await staked.PROTOCOL_ROLE(), registryAddress);
  await nodeRegistry.grantRole(await nodeRegistry.RECORDER_ROLE(), registryAddress);
  await registry.grantRole(await registry.REWARDS_FUNDER_ROLE(), options.admin);
  const attestationVerifier = await ethers.deployContract("AttestationVerifier", [registryAddress]);
  await registry.grantRole(await registry.ATTESTATION_ROLE(), await attestationVerifier.getAddress());
  return { license, nodeRegistry, registry, attestationVerifier };
}
