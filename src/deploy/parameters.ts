import path from "node:path";

import { readDeploymentParameters } from "@nomicfoundation/hardhat-ignition/helpers";
import type { DeploymentParameters } from "@nomicfoundation/ignition-core";
import { isAddress, ZeroAddress } from "ethers";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

/** `deploy/parameters/<network>.json`: the Ignition parameters of one network, committed. */
export function parametersFile(networkName: string): string {
  return path.join(projectRoot, "deploy", "parameters", `${networkName}.json`);
}

/** Parameters that name an account: each must be set to a real address before anything is deployed. */
const ADDRESS_PARAMETERS: Record<string, readonly string[]> = {
  L1: ["supplyRecipient", "proposalGuardian"],
  L2: ["rewardsFunder", "treasury", "forfeitRecipient"],
  L1Intents: [],
};

/**
 * Reads a network's parameter file and merges `overrides` (values known only at deploy time, such as
 * the L1 token address) into `moduleId`'s parameters. Refuses a file where an account parameter is
 * missing, malformed or the zero address: a live deployment must never send the supply, the fees or
 * the admin role to an address nobody controls.
 */
export async function loadParameters(
  networkName: string,
  moduleId: "L1" | "L2" | "L1Intents",
  overrides: Record<string, string | bigint> = {},
): Promise<DeploymentParameters> {
  const file = parametersFile(networkName);
  const parameters = await readDeploymentParameters(file);
  const merged = { ...parameters, [moduleId]: { ...(parameters[moduleId] ?? {}), ...overrides } };
  for (const name of ADDRESS_PARAMETERS[moduleId]) {
    const value = merged[moduleId][name];
    if (typeof value !== "string" || !isAddress(value) || value === ZeroAddress) {
      throw new Error(
        `${path.relative(projectRoot, file)}: ${moduleId}.${name} must be a non-zero address (it is ${JSON.stringify(value ?? null)})`,
      );
    }
  }
  return merged;
}
