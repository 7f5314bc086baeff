import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import { AbiCoder, ContractFactory, getBytes, hexlify, id, keccak256, toBeHex, type ContractRunner, type InterfaceAbi } from "ethers";

import { PERMIT2_ADDRESS } from "@avn/protocol/intents";

const require = createRequire(import.meta.url);

/** The pinned OP Bedrock release whose compiled contracts the devnet runs. */
const BEDROCK_PACKAGE = "@eth-optimism/contracts-bedrock";
const bedrockRoot = path.dirname(require.resolve(`${BEDROCK_PACKAGE}/package.json`));

/** A compiled OP contract, as Foundry wrote it into the package's `forge-artifacts/`. */
export interface OpArtifact {
  contractName: string;
  abi: InterfaceAbi;
  bytecode: string;
  deployedBytecode: string;
}

interface ForgeArtifact {
  abi: InterfaceAbi;
  bytecode: { object: string; linkReferences: Record<string, unknown> };
  deployedBytecode: { object: string };
}

const cache = new Map<string, OpArtifact>();

/** Loads `forge-artifacts/<name>.sol/<name>.json` of the pinned release. */
export function opArtifact(contractName: string): OpArtifact {
  const cached = cache.get(contractName);
  if (cached !== undefined) return cached;
  const file = path.join(bedrockRoot, "forge-artifacts", `${contractName}.sol`, `${contractName}.json`);
  const forge = JSON.parse(readFileSync(file, "utf8")) as ForgeArtifact;
  if (Object.keys(forge.bytecode.linkReferences).length > 0) {
    throw new Error(`${contractName} needs linked libraries, which the devnet does not deploy`);
  }
  const artifact: OpArtifact = {
    contractName,
    abi: forge.abi,
    bytecode: forge.bytecode.object,
    deployedBytecode: forge.deployedBytecode.object,
  };
  cache.set(contractName, artifact);
  return artifact;
}

/** An ethers factory for an OP contract, ready to deploy with `runner`. */
export function opFactory(contractName: string, runner: ContractRunner): ContractFactory {
  const { abi, bytecode } = opArtifact(contractName);
  return new ContractFactory(abi, bytecode, runner);
}

/**
 * The runtime code of a well-known contract the OP stack preinstalls on L2 (Multicall3, Permit2, …), read
 * from the release's `Preinstalls` library source, where each is a `bytes internal constant <Name>Code =
 * hex"…"`. Reading it from the pinned package keeps the bytes those of the audited release.
 */
export function opPreinstallCode(name: string): string {
  const source = readFileSync(path.join(bedrockRoot, "src", "libraries", "Preinstalls.sol"), "utf8");
  const match = new RegExp(`bytes internal constant ${name}Code =\\s*hex"([0-9a-fA-F]+)"`).exec(source);
  if (match === null) throw new Error(`${BEDROCK_PACKAGE} has no preinstall named ${name}`);
  return `0x${match[1]}`;
}

/**
 * Permit2's runtime code for chain `chainId`, as the OP stack preinstalls it (`Preinstalls.getPermit2Code`): the
 * release's template (mainnet's deployment) with its two immutables, the cached chain id and EIP-712 domain
 * separator, written for this chain at the byte offsets the release gives.
 */
export function permit2Code(chainId: bigint): string {
  const code = getBytes(opPreinstallCode("Permit2Template"));
  const domainSeparator = keccak256(
    AbiCoder.defaultAbiCoder().encode(
      ["bytes32", "bytes32", "uint256", "address"],
      [id("EIP712Domain(string name,uint256 chainId,address verifyingContract)"), id("Permit2"), chainId, PERMIT2_ADDRESS],
    ),
  );
  code.set(getBytes(toBeHex(chainId, 32)), 6945);
  code.set(getBytes(domainSeparator), 6983);
  return hexlify(code);
}
