import { defineConfig } from "tsdown";

/**
 * One ESM entry with its declarations. viem is the package's one runtime dependency and stays an import;
 * what the SDK uses of `@avn/protocol` (a private workspace package, never published) is bundled into
 * dist/, JavaScript and declarations alike, with what that code reaches of its own dependencies and no
 * more (tree-shaken). `onlyBundle` fails the build if anything else would be bundled. tsconfig.json maps
 * `@avn/protocol/*` to the package's sources (`paths`): reached through node_modules, tsc counts them as a
 * library's files and emits no declarations for them, and the declaration build fails.
 *
 * zod is bundled for the attestation messages' schemas (`@avn/protocol/attestation-kinds`, written with
 * `zod/mini`, which tree-shakes to about 35 kB): the same schemas the hub checks the nodes' frames with, so
 * the SDK's checks and types cannot drift from the wire. It is not a runtime dependency.
 *
 * @noble/hashes is bundled for `verifyWebhook`'s HMAC-SHA256 (`@avn/protocol/webhook-signature`): synchronous,
 * and the same in browsers and Node. It is not a runtime dependency either.
 *
 * `platform: "browser"` because browser bundles import this package: the Solana codecs that
 * `conditionHash` reaches are then taken from their browser builds (web APIs only; Node runs them alike),
 * and a Node-only import would not resolve.
 */
export default defineConfig({
  entry: ["src/index.ts"],
  format: "esm",
  platform: "browser",
  target: "es2022",
  outDir: "dist",
  clean: true,
  dts: true,
  fixedExtension: false,
  // The Solana packages keep a table of every error message for development builds (some 70 kB) behind
  // `process.env.NODE_ENV`; the SDK only reaches their address checks, whose errors it catches or rethrows
  // as its own. Replacing the expression also leaves no `process` reference in dist/ for a browser to trip on.
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  deps: {
    neverBundle: ["viem", /^viem\//],
    onlyBundle: ["canonicalize", /^@solana\//, "zod", /^@noble\/hashes/],
  },
});
