import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";

import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import type { IgnitionModule, IgnitionModuleResult, ModuleParameters, SolidityParameterType } from "@nomicfoundation/ignition-core";
import hre from "hardhat";
import type { NetworkConnection } from "hardhat/types/network";

import ProtocolModule from "../../deploy/modules/Protocol.ts";
import TokensModule from "../../deploy/modules/Tokens.ts";
import { DEVNET_IGNITION_CONFIG } from "./two-chain.ts";

export { DEFAULT_RATE_SCHEDULE } from "../../deploy/modules/parts/defaults.ts";

// Tests and benchmarks deploy the protocol through the same Ignition modules that the deploy scripts ship
// (deploy/modules/Tokens.ts, Protocol.ts), so what they check is the shipped wiring; they only choose
// parameters. The functions here wrap `ignition.deploy` and hand back typed contracts.

/** The parts of a network connection a deployment uses. */
export type DeployConnection = Pick<NetworkConnection, "ethers" | "ignition" | "networkConfig">;

/**
 * Where to deploy: a network connection, or only its `ethers` (what the tests' fixtures and the benchmarks
 * hold), for a connection opened after this module was loaded.
 */
export type DeployTarget = HardhatEthers | DeployConnection;

// `ethers.deployContract` needed nothing but `ethers`; Ignition needs the connection's `ignition`, and a
// connection's `ethers` does not lead back to its connection. Every connection opened from now on is
// remembered by its `ethers` (weakly: a closed connection is forgotten with it), so that callers keep
// passing `ethers` and need no change. The test files and the bench script import this module (through
// the helpers) before they open their connection, so their connections are all seen.
const connectionsByEthers = new WeakMap<HardhatEthers, DeployConnection>();
hre.hooks.registerHandlers("network", {
  async newConnection(context, next) {
    const connection = await next(context);
    connectionsByEthers.set(connection.ethers, connection);
    return connection;
  },
});

function connectionOf(target: DeployTarget): DeployConnection {
  if ("ignition" in target) return target;
  const connection = connectionsByEthers.get(target);
  if (connection === undefined) {
    throw new Error("this ethers belongs to a connection opened before src/deploy/contracts.ts was loaded: pass the connection itself");
  }
  return connection;
}

/** Module Tokens' parameters (deploy/modules/Tokens.ts); what is left out takes the module's default. */
export type TokensParameters = {
  /** Receives the whole primary supply. */
  supplyRecipient?: string;
  /** Governs the staked token (the deploying account must be it when module Protocol grants roles). */
  admin?: string;
  forfeitRecipient?: string;
  adminTransferDelay?: bigint;
  minUnlockPeriod?: bigint;
  maxUnlockPeriod?: bigint;
  minRedemptionRate?: bigint;
  maxRedemptionRate?: bigint;
};

/** Module Protocol's own parameters (deploy/modules/Protocol.ts, parts/verification-services.ts). */
export type ProtocolParameters = {
  /** Receives the reward pools' REWARDS_FUNDER_ROLE. */
  admin?: string;
  treasury?: string;
  adminTransferDelay?: bigint;
  licenseMaxSupply?: bigint;
  licensePriceTiers?: ReadonlyArray<{ upToSupply: bigint; price: bigint }>;
  livenessWindow?: bigint;
  quorum?: bigint;
  epochDuration?: bigint;
  settlementDelay?: bigint;
  disputePeriod?: bigint;
  requestFee?: bigint;
  jobTimeout?: bigint;
};

/** Ignition's parameter record, without the parameters left out (Ignition refuses `undefined`). */
function moduleParameters(parameters: Record<string, unknown>): ModuleParameters {
  const defined = Object.entries(parameters).filter(([, value]) => value !== undefined);
  return Object.fromEntries(
    defined.map(([name, value]) => [
      name,
      (Array.isArray(value) ? value.map((item: object) => ({ ...item })) : value) as SolidityParameterType,
    ]),
  );
}

/**
 * `ignition.deploy` on `connection`. The in-process network keeps Ignition's journal in memory; a chain
 * reached over HTTP (a test's anvil) would write it to deploy/deployments/<id>, where the devnet's own
 * journal lives, so such a deployment gets an id of its own (git-ignored `test-*`) whose journal is
 * removed once it is done: these throwaway deployments are never resumed.
 */
async function deployModule<ModuleIdT extends string, ContractNameT extends string, ResultsT extends IgnitionModuleResult<ContractNameT>>(
  connection: DeployConnection,
  module: IgnitionModule<ModuleIdT, ContractNameT, ResultsT>,
  parameters: Record<string, ModuleParameters>,
) {
  if (connection.networkConfig.type === "edr-simulated") return connection.ignition.deploy(module, { parameters });
  const deploymentId = `test-${module.id.toLowerCase()}-${randomBytes(4).toString("hex")}`;
  try {
    return await connection.ignition.deploy(module, { parameters, deploymentId, config: DEVNET_IGNITION_CONFIG });
  } finally {
    await rm(path.join(hre.config.paths.ignition, "deployments", deploymentId), { recursive: true, force: true });
  }
}

/** Deploys the primary token and the staked token backed by it (module Tokens). */
export async function deployTokenPair(target: DeployTarget, tokens: TokensParameters = {}) {
  const connection = connectionOf(target);
  const { ethers } = connection;
  const deployed = await deployModule(connection, TokensModule, { Tokens: moduleParameters(tokens) });
  return {
    primary: await ethers.getContractAt("PrimaryToken", await deployed.primary.getAddress()),
    staked: await ethers.getContractAt("StakedToken", await deployed.staked.getAddress()),
  };
}

/**
 * Deploys the whole protocol on one chain (module Protocol, which deploys module Tokens): the tokens, the
 * node licenses, the node registry, the verification registry and the attestation verifier, wired by the
 * module. The deploying account (account 0) must be the staked token's admin, as it is by default.
 */
export async function deployProtocolContracts(
  target: DeployTarget,
  parameters: { tokens?: TokensParameters; protocol?: ProtocolParameters } = {},
) {
  const connection = connectionOf(target);
  const { ethers } = connection;
  const deployed = await deployModule(connection, ProtocolModule, {
    Tokens: moduleParameters(parameters.tokens ?? {}),
    Protocol: moduleParameters(parameters.protocol ?? {}),
  });
  // Typed handles: the module's results are untyped contracts (its tokens come through `useModule`).
  return {
    primary: await ethers.getContractAt("PrimaryToken", await deployed.primary.getAddress()),
    staked: await ethers.getContractAt("StakedToken", await deployed.staked.getAddress()),
    license: await ethers.getContractAt("NodeLicense", await deployed.license.getAddress()),
    nodeRegistry: await ethers.getContractAt("NodeRegistry", await deployed.nodeRegistry.getAddress()),
    registry: await ethers.getContractAt("VerificationRegistry", await deployed.verificationRegistry.getAddress()),
    rewardPools: await ethers.getContractAt("RewardPools", await deployed.rewardPools.getAddress()),
    attestationVerifier: await ethers.getContractAt("AttestationVerifier", await deployed.attestationVerifier.getAddress()),
  };
}
