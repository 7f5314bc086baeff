import { createRequire } from "node:module";

import { defineConfig } from "hardhat/config";

const require = createRequire(import.meta.url);

// Hardhat downloads compilers from binaries.soliditylang.org by default. Where that site is unreachable
// (as on the machines this example is tested on), it compiles with the WebAssembly build of the `solc` npm
// package instead; its version is read from the package, so the two cannot drift. Delete `path` to let
// Hardhat download the native compiler.
const solc = { version: (require("solc/package.json") as { version: string }).version, path: require.resolve("solc/soljson.js") };

export default defineConfig({
  solidity: {
    compilers: [{ ...solc, settings: { optimizer: { enabled: true, runs: 10_000 }, evmVersion: "cancun" } }],
  },
});
