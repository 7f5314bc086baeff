import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import hardhatToolboxMochaEthers from "@nomicfoundation/hardhat-toolbox-mocha-ethers";
import { configVariable, defineConfig } from "hardhat/config";
import type { ChainDescriptorsUserConfig } from "hardhat/types/config";
import type { HardhatPlugin } from "hardhat/types/plugins";

const require = createRequire(import.meta.url);

// The compiler download site is unreachable here, so Hardhat compiles with the
// WebAssembly build shipped in the `solc` npm package. Its version is read from
// that package, so the configured version and the pinned package can never drift.
const solcVersion = (require("solc/package.json") as { version: string }).version;
const solcPath = require.resolve("solc/soljson.js");

// The first storage proof verifier, kept as the reference for benchmarks and trie fuzzing, uses Optimism
// Bedrock's trie and RLP libraries straight from @eth-optimism/contracts-bedrock, which pin
// `pragma solidity 0.8.15` exactly (RLPErrors.sol). So it alone is compiled by a second compiler, the same
// kind of build from the `solc-0.8.15` alias of the npm `solc` package.
const bedrockSolcVersion = (require("solc-0.8.15/package.json") as { version: string }).version;
const bedrockSolcPath = require.resolve("solc-0.8.15/soljson.js");

// The public interfaces and AttestationConsumer are the workspace package @avn/contracts (packages/contracts), and
// the repository's contracts import them by that name as integrators do (`@avn/contracts/interfaces/...`).
// remappings.txt maps that name to packages/contracts/, which is a source folder below: the repository and the
// published package compile one source, and its files are project files, not npm files. That matters because
// Hardhat's coverage instruments project files only: built as an npm package (`npmFilesToBuild`),
// AttestationConsumer.sol would escape the coverage gate (scripts/check-coverage.ts).
// packages/contracts holds nothing else Solidity; Hardhat reads only its .sol files.

/** The main compiler, optimized for `runs` calls per function. Cancun is live on the L1 test network and the OP-stack L2. */
function compiler(runs: number) {
  return { version: solcVersion, path: solcPath, settings: { optimizer: { enabled: true, runs }, evmVersion: "cancun" } };
}

/**
 * The main compiler for a file that must be compiled in a job of its own: Hardhat merges the jobs of files
 * with equal settings, and this one's differ only in stating solc's default metadata hash, which leaves the
 * bytecode as the main compiler's.
 */
function compilerApart(runs: number) {
  const { settings, ...rest } = compiler(runs);
  return { ...rest, settings: { ...settings, metadata: { bytecodeHash: "ipfs" } } };
}

/** The 0.8.15 compiler, with the main compiler's optimizer settings; 0.8.15 predates Cancun, its newest target is London. */
function bedrockCompiler(runs: number) {
  return {
    version: bedrockSolcVersion,
    path: bedrockSolcPath,
    settings: { optimizer: { enabled: true, runs }, evmVersion: "london" },
  };
}

// Local devnet RPC URLs: the running local stack (`npm start`) writes the ports it chose into
// .devnet/stack.json; environment variables override; the fallbacks are anvil's usual ports.
function runningStackRpcUrl(part: "l1" | "l2"): string | undefined {
  try {
    const stack = JSON.parse(readFileSync(new URL("./.devnet/stack.json", import.meta.url), "utf8")) as Partial<
      Record<typeof part, { rpcUrl?: string }>
    >;
    return stack[part]?.rpcUrl;
  } catch {
    return undefined; // no stack running
  }
}
const devnetL1Url = process.env.DEVNET_L1_RPC_URL ?? runningStackRpcUrl("l1") ?? "http://127.0.0.1:8545";
const devnetL2Url = process.env.DEVNET_L2_RPC_URL ?? runningStackRpcUrl("l2") ?? "http://127.0.0.1:9545";

// The devnet's accounts sign here, as wallets do, and reach anvil as eth_sendRawTransaction: anvil's own
// signing path (eth_sendTransaction, which a network without accounts uses) files a transaction sent while
// its predecessor waits in the pool as ready with no tie to it, and anvil 1.7.1's block builder takes ready
// transactions by fee cap: a later nonce priced higher (Ignition prices each from the latest base fee) ran
// first, failed "nonce too high" and was removed from the pool for good (docs/devnet-and-bridge.md, "The
// lost deployment transaction"). The mnemonic is anvil's public development one (src/devnet/accounts.ts,
// ANVIL_MNEMONIC): its ten funded accounts, in anvil's order. Written out, not imported: the node's image
// builds with this file and the contracts alone.
const devnetAccounts = { mnemonic: "test test test test test test test test test test test junk", count: 10 };

// Contract verification on the explorers. The L1 test network is Sepolia, which hardhat-verify knows;
// the L2 rollup's Blockscout explorer is configuration: L2_TESTNET_EXPLORER_URL (and
// L2_TESTNET_EXPLORER_API_URL when the API is not at <url>/api). Etherscan's key is a configuration
// variable like the RPC URLs, read only when a verification runs.
const L2_TESTNET_CHAIN_ID = 123420000418;
const l2ExplorerUrl = process.env.L2_TESTNET_EXPLORER_URL;
const chainDescriptors: ChainDescriptorsUserConfig =
  l2ExplorerUrl === undefined || l2ExplorerUrl === ""
    ? {}
    : {
        [L2_TESTNET_CHAIN_ID]: {
          name: "L2 test network",
          chainType: "op",
          blockExplorers: {
            blockscout: {
              name: "L2 test network explorer",
              url: l2ExplorerUrl,
              apiUrl: process.env.L2_TESTNET_EXPLORER_API_URL ?? `${l2ExplorerUrl.replace(/\/$/, "")}/api`,
            },
          },
        },
      };

// npm test runs its mocha processes side by side: they only collect coverage data, and one report is made
// after them (src/tooling/coverage/collect-only.ts says why; inert unless npm test sets its variable).
const coverageCollectOnly: HardhatPlugin = {
  id: "avn:coverage-collect-only",
  hookHandlers: { test: () => import("./src/tooling/coverage/collect-only.ts") },
};

export default defineConfig({
  plugins: [hardhatToolboxMochaEthers, coverageCollectOnly],
  chainDescriptors,
  verify: {
    etherscan: { apiKey: configVariable("ETHERSCAN_API_KEY") },
    blockscout: { enabled: true },
  },
  solidity: {
    compilers: [compiler(10_000)],
    overrides: {
      // OpenZeppelin's Governor with its extensions is within a few hundred bytes of the 24 KiB code limit
      // at 10,000 runs; its functions run once per proposal or vote, so it is optimized for size.
      "contracts/governance/ProtocolGovernor.sol": compiler(200),
      // Bedrock's MerkleTrie/SecureMerkleTrie/RLPReader need 0.8.15 (see above). Only the reference verifier that
      // the gas benchmark and the trie fuzzing compare the real one with uses them; the L1Block interfaces it
      // imports from packages/contracts float at ^0.8.15 for this compiler.
      "contracts/mocks/BedrockStorageProofVerifier.sol": bedrockCompiler(10_000),
      // EAS's interfaces (IEAS.sol) in the one job of every other contract make the coverage build's solc (its
      // WebAssembly build, 0.8.28) fail with "memory access out of bounds" on a clean build; in a job of their own
      // they build. The exporter is their only importer.
      "contracts/eas/AttestationExporter.sol": compilerApart(10_000),
    },
  },
  paths: {
    // The repository's contracts, and the @avn/contracts package's (see remappings.txt and the note above).
    sources: { solidity: ["contracts", "packages/contracts"] },
    // Ignition modules, per-network parameters and deployment records live in deploy/.
    ignition: "deploy",
    tests: {
      mocha: "test/ts",
      solidity: "test/solidity",
    },
  },
  typechain: {
    outDir: "typechain-types",
  },
  test: {
    mocha: {
      timeout: 120_000,
    },
    solidity: {
      fuzz: { runs: 512 },
      invariant: { runs: 128, depth: 64, failOnRevert: true },
    },
  },
  networks: {
    // In-process simulated networks for tests.
    hardhat: {
      type: "edr-simulated",
      chainType: "l1",
    },
    hardhatOp: {
      type: "edr-simulated",
      chainType: "op",
    },
    // Live test networks: URLs and keys come from configuration variables
    // (environment or `npx hardhat keystore set <NAME>`), never from the repo.
    l1Testnet: {
      type: "http",
      chainType: "l1",
      chainId: 11155111,
      url: configVariable("L1_TESTNET_RPC_URL"),
      accounts: [configVariable("L1_TESTNET_DEPLOYER_KEY")],
    },
    l2Testnet: {
      type: "http",
      chainType: "op",
      chainId: L2_TESTNET_CHAIN_ID,
      url: configVariable("L2_TESTNET_RPC_URL"),
      accounts: [configVariable("L2_TESTNET_DEPLOYER_KEY")],
    },
    // Local devnet (anvil). Accounts are anvil's unlocked development accounts.
    devnetL1: {
      type: "http",
      chainType: "l1",
      chainId: 900,
      url: devnetL1Url,
      accounts: devnetAccounts,
    },
    devnetL2: {
      type: "http",
      chainType: "op",
      chainId: 901,
      url: devnetL2Url,
      accounts: devnetAccounts,
    },
  },
});
