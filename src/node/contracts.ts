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

/** Chains as jobs name them (IVerificationRegistry). */
export const SOURCE_CHAIN = { ethereum: 0, solana: 1 } as const;

/** Why the registry skipped a submission (`IVerificationRegistry.IgnoreReason`, in its order). */
export const IGNORE_REASON = { jobFinalized: 0, jobExpired: 1, deadlinePassed: 2, voteLimitReached: 3, licenseNotLive: 4, alreadyVoted: 5 } as const;
