import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import type { InterfaceAbi } from "ethers";

const require = createRequire(import.meta.url);

/** The pinned EAS release whose compiled contracts the devnet's L2 runs at the OP predeploy addresses. */
const EAS_PACKAGE = "@ethereum-attestation-service/eas-contracts";
const easRoot = path.dirname(require.resolve(`${EAS_PACKAGE}/package.json`));

/** A compiled EAS contract as the package ships it (Hardhat's artifact format). */
export interface EasArtifact {
  contractName: string;
  abi: InterfaceAbi;
  /** The creation code: runtime code with immutables (EAS's registry, the versions) is only had by running it. */
  bytecode: string;
}

/** Loads `artifacts/contracts/<name>.sol/<name>.json` of the pinned release: "EAS" or "SchemaRegistry". */
export function easArtifact(contractName: "EAS" | "SchemaRegistry"): EasArtifact {
  const file = path.join(easRoot, "artifacts", "contracts", `${contractName}.sol`, `${contractName}.json`);
  const { abi, bytecode } = JSON.parse(readFileSync(file, "utf8")) as { abi: InterfaceAbi; bytecode: string };
  return { contractName, abi, bytecode };
}
