import type { ContractRunner } from "ethers";

import { contractAt } from "../common/artifacts.ts";
import type { NodeLicense, NodeRegistry, VerificationRegistry } from "../../typechain-types/index.ts";

export function verificationRegistryAt(address: string, runner: ContractRunner): VerificationRegistry {
  return contractAt<VerificationRegistry>("VerificationRegistry", address, runner);
}

export function nodeRegistryAt(address: string, runner: ContractRunner): NodeRegistry {
  return contractAt<NodeRegistry>("NodeRegistry", address, runner);
}

export function nodeLicenseAt(address: string, runner: ContractRunner): NodeLicense {
  return contractAt<NodeLicense>("NodeLicense", address, runner);
}
