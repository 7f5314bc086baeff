import path from "node:path";

import { expect } from "chai";
import { ESLint, type Linter } from "eslint";
import tseslint from "typescript-eslint";

import { layerRules } from "../../../eslint.layers.mjs";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/**
 * The layering (eslint.layers.mjs, docs/architecture.md) holds by itself: an import planted against it in
 * any folder fails lint, and the imports the layering allows pass. Each case lints one line of code as
 * if it were a file at that path (the file need not exist; what it imports does), with the layer rules
 * alone, so a failure here names the rule and nothing else.
 */
describe("layer rules in lint", function () {
  this.timeout(120_000);

  const eslint = new ESLint({
    cwd: projectRoot,
    overrideConfigFile: true,
    overrideConfig: [{ files: ["**/*.{ts,tsx}"], languageOptions: { parser: tseslint.parser } }, ...layerRules],
  });

  async function layeringErrors(file: string, importLine: string): Promise<string[]> {
    const [result] = await eslint.lintText(`${importLine}\nexport {};\n`, { filePath: path.join(projectRoot, file) });
    return result.messages.filter((message) => message.ruleId === "boundaries/dependencies").map((message) => message.message);
  }

  // The rule checks only imports that resolve into the repository's own folders: one that resolves as an
  // outside package (a registry's or Node's) passes whatever its folder. So that a workspace imported by
  // name (`@avn/protocol`) cannot pass as an outside package, the allowed cases also ask where each import
  // lands, with the layer rules' own settings (elements, resolver) and a rule that reports every import of
  // every origin, naming its target.
  const reportEveryImport: Linter.RuleEntry = [
    "error",
    { default: "disallow", checkAllOrigins: true, message: "{{to.origin}} {{#if to.type}}{{to.type}}{{else}}{{to.module.source}}{{/if}}" },
  ];
  const whereabouts = new ESLint({
    cwd: projectRoot,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ["**/*.{ts,tsx}"], languageOptions: { parser: tseslint.parser } },
      ...layerRules.map((entry) => ({ ...entry, rules: { "boundaries/dependencies": reportEveryImport } })),
    ],
  });

  /**
   * Where each import of the lines lands, in order: its origin (`local`, `external`, `core`), then its element
   * type or else its package.
   */
  async function importTargets(file: string, importLines: string): Promise<string[]> {
    const [result] = await whereabouts.lintText(`${importLines}\nexport {};\n`, { filePath: path.join(projectRoot, file) });
    return result.messages.filter((message) => message.ruleId === "boundaries/dependencies").map((message) => message.message);
  }

  const refused: Array<[string, string, string]> = [
    ["the API importing the node", "src/api/planted.ts", `import { loadNodeConfig } from "../node/config.ts";`],
    ["the node importing the API", "src/node/planted.ts", `import { loadApiConfig } from "../api/config.ts";`],
    ["governance importing the devnet", "src/governance/planted.ts", `import { startAnvil } from "../devnet/anvil.ts";`],
    ["the web server importing the devnet", "src/web/planted.ts", `import { devAccount } from "../devnet/accounts.ts";`],
    ["credits importing governance (siblings)", "src/credits/planted.ts", `import { GovernanceError } from "../governance/errors.ts";`],
    ["common importing chains (upwards)", "src/common/planted.ts", `import { createSourceReaders } from "../chains/source-readers.ts";`],
    ["chains importing the API (upwards)", "src/chains/evm/planted.ts", `import { ApiError } from "../../api/api-error.ts";`],
    ["the API importing the tooling", "src/api/planted.ts", `import { parseLcovLineCoverage } from "../tooling/lcov.ts";`],
    [
      "the web app importing the root's src",
      "apps/web/src/planted.ts",
      `import { describeError } from "../../../src/common/describe-error.ts";`,
    ],
    [
      "the protocol package importing the root's src",
      "packages/protocol/src/planted.ts",
      `import { describeError } from "../../../src/common/describe-error.ts";`,
    ],
    ["the root importing the web app", "src/web/planted.ts", `import { formatAmount } from "../../apps/web/src/lib/format.ts";`],
    [
      "the SDK importing the root's src",
      "packages/sdk/src/planted.ts",
      `import { describeError } from "../../../src/common/describe-error.ts";`,
    ],
    ["the API importing the bridge package by name", "src/api/planted.ts", `import { Bridge } from "@avn/bridge";`],
    ["the protocol package importing the SDK by name", "packages/protocol/src/planted.ts", `import { AvnClient } from "@avn/sdk";`],
    ["chains importing op (siblings)", "src/chains/planted.ts", `import { opArtifact } from "../op/artifacts.ts";`],
    [
      "the Ignition modules importing src/ (upwards)",
      "deploy/modules/planted.ts",
      `import { opArtifact } from "../../src/op/artifacts.ts";`,
    ],
    [
      "the Ignition modules importing common (upwards)",
      "deploy/modules/planted.ts",
      `import { describeError } from "../../src/common/describe-error.ts";`,
    ],
  ];
  for (const [what, file, line] of refused) {
    it(`refuses ${what}`, async function () {
      const errors = await layeringErrors(file, line);
      expect(errors, line).to.have.length(1);
    });
  }

  // Each allowed case names where its imports land: a workspace imported by name is the folder it is.
  const allowed: Array<[string, string, string, string[]]> = [
    [
      "the API importing chains, common and the protocol package",
      "src/api/planted.ts",
      [
        `import { createSourceReaders } from "../chains/source-readers.ts";`,
        `import { describeError } from "../common/describe-error.ts";`,
        `import { SourceChain } from "@avn/protocol/constants";`,
      ].join("\n"),
      ["local chains", "local common", "local protocol"],
    ],
    ["the devnet importing the node", "src/devnet/planted.ts", `import { loadNodeConfig } from "../node/config.ts";`, ["local node"]],
    [
      "the deploy scripts importing the Ignition modules, which import the protocol package",
      "src/deploy/planted.ts",
      `import Protocol from "../../deploy/modules/Protocol.ts";`,
      ["local ignition"],
    ],
    [
      "the Ignition modules importing the protocol package",
      "deploy/modules/planted.ts",
      `import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";`,
      ["local protocol"],
    ],
    [
      "scripts importing the tooling",
      "scripts/planted.ts",
      `import { parseLcovLineCoverage } from "../src/tooling/lcov.ts";`,
      ["local tooling"],
    ],
    [
      "the bridge command line importing the bridge package by name",
      "src/bridge/planted.ts",
      `import { Bridge } from "@avn/bridge";`,
      ["local bridge-package"],
    ],
    [
      "the web app importing the protocol package",
      "apps/web/src/planted.ts",
      `import { SUPPORT } from "@avn/protocol/constants";`,
      ["local protocol"],
    ],
    [
      "the SDK importing the protocol package",
      "packages/sdk/src/planted.ts",
      `import { SUPPORT } from "@avn/protocol/constants";`,
      ["local protocol"],
    ],
    ["tests importing the devnet", "test/ts/planted.ts", `import { devAccount } from "../../src/devnet/accounts.ts";`, ["local devnet"]],
  ];
  for (const [what, file, lines, targets] of allowed) {
    it(`allows ${what}`, async function () {
      expect(await layeringErrors(file, lines), lines).to.deep.equal([]);
      expect(await importTargets(file, lines), lines).to.deep.equal(targets);
    });
  }

  it("names an outside package as outside and a workspace as its folder", async function () {
    const lines = [`import { z } from "zod";`, `import fs from "node:fs";`, `import { SUPPORT } from "@avn/protocol/constants";`].join(
      "\n",
    );
    expect(await importTargets("src/api/planted.ts", lines)).to.deep.equal(["external zod", "core node:fs", "local protocol"]);
  });

  it("is part of the repository's lint configuration (npm run lint)", async function () {
    const config = (await new ESLint({ cwd: projectRoot }).calculateConfigForFile(path.join(projectRoot, "src/api/main.ts"))) as {
      rules: Record<string, unknown>;
    };
    expect(config.rules["boundaries/dependencies"]).to.be.an("array").with.property("0").that.is.oneOf([2, "error"]);
  });
});
