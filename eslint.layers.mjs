// The layering, enforced: which folder may import which. Read top to bottom, each layer may import the
// layers below it and nothing above:
//
//   scripts → bench, chaos → devnet → node, api, challenger, credits, governance, bridge, deploy, web (server) →
//   chains, op, tokens → common → the Ignition modules → @avn/protocol
//
// Siblings of one layer do not import each other unless SIBLING_PAIRS lists the pair with its reason; api
// and node never do. Only scripts import the tooling. The web app, the bridge package and the SDK import
// nothing of the root but the protocol package. Tests may import anything. docs/architecture.md says what each
// folder owns. test/ts/repository/Layering.ts plants imports against these rules and expects errors.
import boundaries from "eslint-plugin-boundaries";

/** Every layer, top first: the folders (element types) in it. */
export const LAYERS = [
  ["scripts"],
  ["bench", "chaos"],
  ["devnet"],
  ["node", "api", "challenger", "solver", "credits", "governance", "bridge", "deploy", "web-server"],
  ["chains", "op", "tokens"],
  ["common"],
  // The deployment's modules: below everything of src/ that deploys with them, importing only the protocol
  // package (and the pinned OP release), so deploy/ stands below src/ with no import back up.
  ["ignition"],
  ["protocol"],
];

/** Where each element type lives (paths from the repository's root). */
const ELEMENTS = {
  scripts: "scripts/**",
  bench: "src/bench/**",
  chaos: "src/chaos/**",
  devnet: "src/devnet/**",
  node: "src/node/**",
  api: "src/api/**",
  challenger: "src/challenger/**",
  solver: "src/solver/**",
  credits: "src/credits/**",
  governance: "src/governance/**",
  bridge: "src/bridge/**",
  deploy: "src/deploy/**",
  "web-server": "src/web/**",
  ignition: "deploy/modules/**",
  chains: "src/chains/**",
  op: "src/op/**",
  tokens: "src/tokens/**",
  common: "src/common/**",
  protocol: "packages/protocol/**",
  tooling: "src/tooling/**",
  "web-app": "apps/web/**",
  "bridge-package": "packages/bridge/**",
  sdk: "packages/sdk/**",
  typechain: "typechain-types/**",
  test: "test/**",
};

/** Siblings allowed to import each other, each with why. */
export const SIBLING_PAIRS = [];

/** What every layer of src/ may import besides the layers below it: the generated contract types. */
const GENERATED = ["typechain"];

function allowedFor(type) {
  const index = LAYERS.findIndex((layer) => layer.includes(type));
  const below = LAYERS.slice(index + 1).flat();
  const siblings = SIBLING_PAIRS.filter((pair) => pair.from === type).map((pair) => pair.to);
  return [type, ...below, ...siblings, ...(type === "protocol" ? [] : GENERATED)];
}

/** Packages from the registry and Node's own modules: the layering is about the repository's own folders. */
const ANY_PACKAGE = { allow: { to: { module: { origin: ["external", "core"] } } } };

const policies = [
  ...LAYERS.flat().map((type) => ({
    from: { type },
    allow: { to: { type: allowedFor(type).concat(type === "scripts" ? ["tooling"] : []) } },
  })),
  // The bridge command line drives the bridge package; the solver rebalances through it.
  { from: { type: "bridge" }, allow: { to: { type: "bridge-package" } } },
  { from: { type: "solver" }, allow: { to: { type: "bridge-package" } } },
  { from: { type: "devnet" }, allow: { to: { type: "bridge-package" } } },
  { from: { type: "bench" }, allow: { to: { type: "bridge-package" } } },
  { from: { type: "scripts" }, allow: { to: { type: "bridge-package" } } },
  { from: { type: "tooling" }, allow: { to: { type: ["tooling", "common", "protocol"] } } },
  // The web app and the bridge package are workspaces of their own: the protocol package is all they share.
  { from: { type: "web-app" }, allow: { to: { type: ["web-app", "protocol"] } } },
  { from: { type: "bridge-package" }, allow: { to: { type: ["bridge-package", "protocol"] } } },
  // The SDK is published: what it uses of the protocol package is bundled into its build, nothing else.
  { from: { type: "sdk" }, allow: { to: { type: ["sdk", "protocol"] } } },
  { from: { type: "typechain" }, allow: { to: { type: "typechain" } } },
  { from: { type: "test" }, allow: { to: { type: Object.keys(ELEMENTS) } } },
];

const elementOfType = (types) => ({ element: { types: { anyOf: [types].flat() } } });

function policyOf(policy) {
  return { from: elementOfType(policy.from.type), allow: { to: elementOfType(policy.allow.to.type) } };
}

/** The flat-config entries that enforce the layering (spread into eslint.config.js). */
export const layerRules = [
  {
    files: ["**/*.{ts,tsx,mts,js,mjs}"],
    plugins: { boundaries },
    settings: {
      "boundaries/elements": Object.entries(ELEMENTS).map(([type, pattern]) => ({ type, pattern, partialMatch: false })),
      "import/resolver": {
        typescript: {
          alwaysTryTypes: true,
          noWarnOnMultipleProjects: true,
          project: ["tsconfig.json", "apps/web/tsconfig.json", "packages/*/tsconfig.json"],
        },
      },
    },
    rules: {
      "boundaries/dependencies": ["error", { default: "disallow", policies: [...policies.map(policyOf), ANY_PACKAGE] }],
    },
  },
];
