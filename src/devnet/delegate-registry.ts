import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { keccak256 } from "ethers";

import { DELEGATE_REGISTRY_ADDRESS } from "@avn/protocol/delegations";

const require = createRequire(import.meta.url);

/** Where the vendored source is (vendor/delegate-registry/README.md says from where and why). */
const SOURCE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "vendor", "delegate-registry");
const SOURCES = [
  "src/DelegateRegistry.sol",
  "src/IDelegateRegistry.sol",
  "src/libraries/RegistryHashes.sol",
  "src/libraries/RegistryOps.sol",
  "src/libraries/RegistryStorage.sol",
];

/**
 * The keccak-256 of the init code delegate.xyz deployed at `DELEGATE_REGISTRY_ADDRESS` through the immutable
 * CREATE2 factory (their repository's Makefile, `cast-deploy-registry-v2`; the same value in
 * `test/InitCodeHash.t.sol`'s comment).
 */
export const PUBLISHED_INIT_CODE_HASH = "0x78bdba7d5e0c91d9aedc93c97bf84433daaf008a83bfe921c2d27ab77301d6d9";

/** The canonical build's settings (their foundry.toml): solc 0.8.21, Paris, 9,999,999 runs, no IR, no metadata hash. */
const SETTINGS = {
  optimizer: { enabled: true, runs: 9_999_999 },
  evmVersion: "paris",
  viaIR: false,
  metadata: { bytecodeHash: "none" },
  outputSelection: { "src/DelegateRegistry.sol": { DelegateRegistry: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};

export interface DelegateRegistryBuild {
  initCode: string;
  runtimeCode: string;
  abi: unknown[];
}

interface Solc {
  version(): string;
  compile(input: string): string;
}

let built: DelegateRegistryBuild | undefined;

/**
 * DelegateRegistry v2 built from the vendored source with the canonical settings, once per process (about a
 * second), and checked: an init code whose hash is not the published one throws, naming both hashes.
 */
export function buildDelegateRegistry(): DelegateRegistryBuild {
  if (built !== undefined) return built;
  const solc = require("solc-0.8.21") as Solc;
  if (!solc.version().startsWith("0.8.21+")) throw new Error(`DelegateRegistry needs solc 0.8.21, not ${solc.version()}`);
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(SOURCES.map((file) => [file, { content: readFileSync(path.join(SOURCE_ROOT, file), "utf8") }])),
    settings: SETTINGS,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<
      string,
      Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === "error");
  if (errors.length > 0) throw new Error(`DelegateRegistry does not compile:\n${errors.map((error) => error.formattedMessage).join("\n")}`);
  const contract = output.contracts["src/DelegateRegistry.sol"].DelegateRegistry;
  const initCode = `0x${contract.evm.bytecode.object}`;
  if (keccak256(initCode) !== PUBLISHED_INIT_CODE_HASH)
    throw new Error(`DelegateRegistry's init code hashes to ${keccak256(initCode)}, not the published ${PUBLISHED_INIT_CODE_HASH}`);
  built = { initCode, runtimeCode: `0x${contract.evm.deployedBytecode.object}`, abi: contract.abi };
  return built;
}

/**
 * Puts DelegateRegistry v2 at its canonical address, as on every public chain (its constructor sets no storage,
 * so the runtime code alone is the deployment). `dialect`: `anvil` on anvil, `hardhat` on Hardhat's network.
 */
export async function installDelegateRegistry(
  provider: { send(method: string, params: unknown[]): Promise<unknown> },
  dialect: "anvil" | "hardhat" = "anvil",
): Promise<void> {
  await provider.send(`${dialect}_setCode`, [DELEGATE_REGISTRY_ADDRESS, buildDelegateRegistry().runtimeCode]);
}
