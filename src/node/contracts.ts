import { readFileSync } from "node:fs";

import { Contract, type ContractRunner, type InterfaceAbi } from "ethers";

import type { NodeLicense, NodeRegistry, VerificationRegistry } from "../../typechain-types/index.ts";

// The compiled artifacts are the one source of each ABI (`npm run build`; the container image builds them).
const ARTIFACTS = new URL("../../artifacts/contracts/", import.meta.url);

function abiOf(name: string): InterfaceAbi {
  const file = new URL(`${name}.sol/${name}.json`, ARTIFACTS);
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { abi: InterfaceAbi }).abi;
  } catch {
    throw new Error(`the ${name} artifact is missing: run \`npm run build\` first`);
  }
}

export function verificationRegistryAt(address: string, runner: ContractRunner): VerificationRegistry {
  return new Contract(address, abiOf("VerificationRegistry"), runner) as unknown as VerificationRegistry;
}

export function nodeRegistryAt(address: string, runner: ContractRunner): NodeRegistry {
  return new Contract(address, abiOf("NodeRegistry"), runner) as unknown as NodeRegistry;
}

export function nodeLicenseAt(address: string, runner: ContractRunner): NodeLicense {
  return new Contract(address, abiOf("NodeLicense"), runner) as unknown as NodeLicense;
}

/** Chains as jobs name them (IVerificationRegistry). */
export const SOURCE_CHAIN = { ethereum: 0, solana: 1 } as const;

/** Why the registry skipped a submission (`IVerificationRegistry.IgnoreReason`, in its order). */
export const IGNORE_REASON = { jobFinalized: 0, jobExpired: 1, deadlinePassed: 2, voteLimitReached: 3, licenseNotLive: 4, alreadyVoted: 5 } as const;
