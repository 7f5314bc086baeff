import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

// The Ignition modules read the pinned OP release themselves: they sit below the services and import nothing
// of src/ (docs/architecture.md, "Layers"), and the devnet's own reader (`src/op/artifacts.ts`) is above them.
const BEDROCK_PACKAGE = "@eth-optimism/contracts-bedrock";
const bedrockRoot = path.dirname(createRequire(import.meta.url).resolve(`${BEDROCK_PACKAGE}/package.json`));

/**
 * An OP contract of the pinned release in the artifact shape Hardhat Ignition takes (`m.contractAt(id,
 * artifact, address)`), for modules that call OP contracts already on chain, such as the L2 ERC-20 factory
 * predeploy.
 */
export function opIgnitionArtifact(contractName: string) {
  const file = path.join(bedrockRoot, "forge-artifacts", `${contractName}.sol`, `${contractName}.json`);
  const forge = JSON.parse(readFileSync(file, "utf8")) as {
    abi: readonly unknown[];
    bytecode: { object: string };
    deployedBytecode: { object: string };
  };
  return {
    _format: "hh-sol-artifact-1",
    contractName,
    sourceName: `${BEDROCK_PACKAGE}/src/${contractName}.sol`,
    abi: forge.abi as never[],
    bytecode: forge.bytecode.object,
    deployedBytecode: forge.deployedBytecode.object,
    linkReferences: {},
    deployedLinkReferences: {},
  };
}
