import type { DeployConfig } from "@nomicfoundation/ignition-core";
import type { NetworkConnection } from "hardhat/types/network";

import L1Module from "../../deploy/modules/L1.ts";
import L1IntentsModule from "../../deploy/modules/L1Intents.ts";
import L2Module from "../../deploy/modules/L2.ts";
import { handOverAdmin, type AdminHandover } from "./admin-handover.ts";
import { loadParameters } from "./parameters.ts";

export interface DeploymentOptions {
  /** Which `deploy/parameters/<name>.json` to use (defaults to the connection's network name). */
  parametersNetwork?: string;
  /** Ignition deployment id, hence the journal folder `deploy/deployments/<id>` (default `chain-<chainId>`). */
  deploymentId?: string;
  /** Ignition settings; a local chain wants one confirmation and fast polling. */
  ignitionConfig?: Partial<DeployConfig>;
  /** Show Ignition's progress display (for people at a terminal). */
  displayUi?: boolean;
  /**
   * Parameters set over the parameter file's (a test's devnet shortens the epoch and the liveness window);
   * an account parameter is still checked.
   */
  parameterOverrides?: Record<string, string | bigint>;
}

/** Ignition settings for a local devnet: no reorgs to wait out, blocks every 2 s or faster. */
export const DEVNET_IGNITION_CONFIG: Partial<DeployConfig> = { requiredConfirmations: 1, blockPollingInterval: 200 };

export interface L1Deployment {
  PrimaryToken: string;
  Governor: string;
  Timelock: string;
  /** The intent layer's destination: fills of the L2's orders are paid and recorded here (docs/intents.md). */
  DestinationSettler: string;
  /** The escrow of fast deposits to the L2 (module L1Intents, deployed after the L2; docs/intents.md). */
  OriginSettler?: string;
}

/** What the L2 deployment needs from the L1 one. */
export interface L1Links {
  /** The L1 primary token the L2 token is paired with (the pairing is permanent). */
  l1PrimaryToken: string;
  /** The L1 timelock: the only L1 sender the L2 governance executor obeys. */
  l1Timelock: string;
  /** The intent layer's L1 settler, whose fill records the L2's `OriginSettler` proves. */
  l1DestinationSettler: string;
  /** The L1's chain id: the destination of the L2's orders. */
  l1ChainId: bigint;
}

export interface L2Deployment {
  PrimaryToken: string;
  StakedToken: string;
  NodeLicense: string;
  NodeRegistry: string;
  VerificationRegistry: string;
  /** Epoch rewards split by quality of service (docs/verification.md, "Epoch rewards"). */
  RewardPools: string;
  AttestationVerifier: string;
  GovernanceExecutor: string;
  /** Storage proofs of L1 balances (docs/proofs.md): the verifier and the L1 block-hash store it reads. */
  L1BlockHashes: string;
  StorageProofVerifier: string;
  /** Where the nodes publish their measurements of the service (docs/verification.md). */
  QosReports: string;
  /** The intent layer's escrow of fast withdrawals to L1 (docs/intents.md). */
  OriginSettler: string;
  /** Where fast deposits from L1 are filled and reported to L1 (docs/intents.md). */
  DestinationSettler: string;
  /** Exports the verifier's answers to EAS under its two schemas (docs/eas.md). */
  AttestationExporter: string;
  /** Contracts whose admin role awaits acceptance by the governance executor (its first proposal). */
  adminHandovers: AdminHandover[];
}

/** Deploys module L1 (the primary token and its governor and timelock) with the network's parameters. */
export async function deployL1(connection: NetworkConnection, options: DeploymentOptions = {}): Promise<L1Deployment> {
  const parameters = await loadParameters(options.parametersNetwork ?? connection.networkName, "L1", options.parameterOverrides);
  const { primary, governor, timelock, destinationSettler } = await connection.ignition.deploy(L1Module, {
    parameters,
    deploymentId: options.deploymentId,
    config: options.ignitionConfig,
    displayUi: options.displayUi ?? false,
  });
  return {
    PrimaryToken: await primary.getAddress(),
    Governor: await governor.getAddress(),
    Timelock: await timelock.getAddress(),
    DestinationSettler: await destinationSettler.getAddress(),
  };
}

/**
 * Deploys module L2 against the L1 token and timelock of `links`, then starts handing the admin role of
 * every protocol contract over to the governance executor (idempotent: a re-run only does what is
 * missing). The executor accepts it through governance's first proposal (`accept-admin`; on the devnet
 * `placeUnderGovernance` in `src/devnet/governance-setup.ts` passes it).
 */
export async function deployL2(connection: NetworkConnection, links: L1Links, options: DeploymentOptions = {}): Promise<L2Deployment> {
  const parameters = await loadParameters(options.parametersNetwork ?? connection.networkName, "L2", {
    ...options.parameterOverrides,
    ...links,
  });
  const deployed = await connection.ignition.deploy(L2Module, {
    parameters,
    deploymentId: options.deploymentId,
    config: options.ignitionConfig,
    displayUi: options.displayUi ?? false,
  });
  const addresses = {
    PrimaryToken: await deployed.primary.getAddress(),
    StakedToken: await deployed.staked.getAddress(),
    NodeLicense: await deployed.license.getAddress(),
    NodeRegistry: await deployed.nodeRegistry.getAddress(),
    VerificationRegistry: await deployed.verificationRegistry.getAddress(),
    RewardPools: await deployed.rewardPools.getAddress(),
    AttestationVerifier: await deployed.attestationVerifier.getAddress(),
    GovernanceExecutor: await deployed.executor.getAddress(),
    L1BlockHashes: await deployed.l1BlockHashes.getAddress(),
    StorageProofVerifier: await deployed.storageProofVerifier.getAddress(),
    QosReports: await deployed.qosReports.getAddress(),
    OriginSettler: await deployed.originSettler.getAddress(),
    DestinationSettler: await deployed.destinationSettler.getAddress(),
    AttestationExporter: await deployed.attestationExporter.getAddress(),
  };
  const [deployer] = await connection.ethers.getSigners();
  const adminHandovers = await handOverAdmin(governedContracts(addresses), addresses.GovernanceExecutor, deployer);
  return { ...addresses, adminHandovers };
}

/** The L2 contracts with an admin role, which governance holds (the attestation verifier has none). */
export function governedContracts(
  l2: Pick<L2Deployment, "StakedToken" | "NodeLicense" | "NodeRegistry" | "VerificationRegistry" | "RewardPools">,
): string[] {
  return [l2.StakedToken, l2.NodeLicense, l2.NodeRegistry, l2.VerificationRegistry, l2.RewardPools];
}

/** What the L1 side of fast deposits needs from both deployments and the OP chain. */
export interface L1IntentLinks {
  /** The OP chain's L1CrossDomainMessenger (proxy): it relays the L2 settler's reports. */
  l1Messenger: string;
  l1PrimaryToken: string;
  l2PrimaryToken: string;
  /** The L2's `DestinationSettler` (an `L2DestinationSettler`). */
  l2DestinationSettler: string;
  l2ChainId: bigint;
}

/**
 * Deploys module L1Intents (the `L1OriginSettler` of fast deposits) on L1, after the L2, whose destination settler it
 * names. Returns its address.
 */
export async function deployL1Intents(
  connection: NetworkConnection,
  links: L1IntentLinks,
  options: DeploymentOptions = {},
): Promise<string> {
  const parameters = await loadParameters(options.parametersNetwork ?? connection.networkName, "L1Intents", {
    ...options.parameterOverrides,
    ...links,
  });
  const { originSettler } = await connection.ignition.deploy(L1IntentsModule, {
    parameters,
    deploymentId: options.deploymentId,
    config: options.ignitionConfig,
    displayUi: options.displayUi ?? false,
  });
  return originSettler.getAddress();
}
