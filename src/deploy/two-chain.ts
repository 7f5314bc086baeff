import type { DeployConfig } from "@nomicfoundation/ignition-core";
import type { NetworkConnection } from "hardhat/types/network";

import L1Module from "../../deploy/modules/L1.js";
import L2Module from "../../deploy/modules/L2.js";
import { handOverAdmin, type AdminHandover } from "./admin-handover.js";
import { loadParameters } from "./parameters.js";

export interface DeploymentOptions {
  /** Which `deploy/parameters/<name>.json` to use (defaults to the connection's network name). */
  parametersNetwork?: string;
  /** Ignition deployment id, hence the journal folder `deploy/deployments/<id>` (default `chain-<chainId>`). */
  deploymentId?: string;
  /** Ignition settings; a local chain wants one confirmation and fast polling. */
  ignitionConfig?: Partial<DeployConfig>;
  /** Show Ignition's progress display (for people at a terminal). */
  displayUi?: boolean;
}

/** Ignition settings for a local devnet: no reorgs to wait out, blocks every 2 s or faster. */
export const DEVNET_IGNITION_CONFIG: Partial<DeployConfig> = { requiredConfirmations: 1, blockPollingInterval: 200 };

export interface L1Deployment {
  PrimaryToken: string;
}

export interface L2Deployment {
  PrimaryToken: string;
  StakedToken: string;
  NodeLicense: string;
  NodeRegistry: string;
  VerificationRegistry: string;
  AttestationVerifier: string;
  /** Contracts whose admin role awaits acceptance by the `admin` parameter. */
  adminHandovers: AdminHandover[];
}

/** Deploys module L1 (the primary token) with the network's parameters. */
export async function deployL1(connection: NetworkConnection, options: DeploymentOptions = {}): Promise<L1Deployment> {
  const parameters = await loadParameters(options.parametersNetwork ?? connection.networkName, "L1");
  const { primary } = await connection.ignition.deploy(L1Module, {
    parameters,
    deploymentId: options.deploymentId,
    config: options.ignitionConfig,
    displayUi: options.displayUi ?? false,
  });
  return { PrimaryToken: await primary.getAddress() };
}

/**
 * Deploys module L2 against the L1 token at `l1PrimaryToken`, then starts handing the admin role of
 * every contract over to the `admin` parameter if that is not the deployer.
 */
export async function deployL2(
  connection: NetworkConnection,
  l1PrimaryToken: string,
  options: DeploymentOptions = {},
): Promise<L2Deployment> {
  const parameters = await loadParameters(options.parametersNetwork ?? connection.networkName, "L2", { l1PrimaryToken });
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
    AttestationVerifier: await deployed.attestationVerifier.getAddress(),
  };
  const admin = String(parameters.L2.admin);
  const [deployer] = await connection.ethers.getSigners();
  const adminHandovers = await handOverAdmin(
    [addresses.StakedToken, addresses.NodeLicense, addresses.NodeRegistry, addresses.VerificationRegistry],
    admin,
    deployer,
  );
  return { ...addresses, adminHandovers };
}
