import path from "node:path";

import { expect } from "chai";
import { ESLint } from "eslint";
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

  const refused: Array<[string, string, string]> = [
    ["the API importing the node", "src/api/planted.ts", `import { loadNodeConfig } from "../node/config.ts";`],
    ["the node importing the API", "src/node/planted.ts", `import { loadApiConfig } from "../api/config.ts";`],
    ["governance importing the devnet", "src/governance/planted.ts", `import { startAnvil } from "../devnet/anvil.ts";`],
    ["the web server importing the devnet", "src/web/planted.ts", `import { devAccount } from "../devnet/accounts.ts";`],
    ["credits importing governance (siblings)", "src/credits/planted.ts", `import { GovernanceError } from "../governance/errors.ts";`],
    ["common importing chains (upwards)", "src/common/planted.ts", `import { createSourceReaders } from "../chains/source-readers.ts";`],
    ["chains importing the API (upwards)", "src/chains/evm/planted.ts", `import { ApiError } from "../../api/api-error.ts";`],
    ["the API importing the tooling", "src/api/planted.ts", `import { parseLcovLineCoverage } from "../tooling/lcov.ts";`],
    ["the web app importing the root's src", "apps/web/src/planted.ts", `import { E18 } from "../../../src/common/units.ts";`],
    [
      "the protocol package importing the root's src",
      "packages/protocol/src/planted.ts",
      `import { E18 } from "../../../src/common/units.ts";`,
    ],
    ["the root importing the web app", "src/web/planted.ts", `import { formatAmount } from "../../apps/web/src/lib/format.ts";`],
    ["the SDK importing the root's src", "packages/sdk/src/planted.ts", `import { E18 } from "../../../src/common/units.ts";`],
  ];
  for (const [what, file, line] of refused) {
    it(`refuses ${what}`, async function () {
      const errors = await layeringErrors(file, line);
      expect(errors, line).to.have.length(1);
    });
  }

  const allowed: Array<[string, string, string]> = [
    [
      "the API importing chains, common and the protocol package",
      "src/api/planted.ts",
      [
        `import { createSourceReaders } from "../chains/source-readers.ts";`,
        `import { E18 } from "../common/units.ts";`,
        `import { SourceChain } from "@avn/protocol/constants";`,
      ].join("\n"),
    ],
    ["the devnet importing the node", "src/devnet/planted.ts", `import { loadNodeConfig } from "../node/config.ts";`],
    ["chains importing op (a listed pair)", "src/chains/planted.ts", `import { MULTICALL3_ADDRESS } from "../op/predeploys.ts";`],
    ["scripts importing the tooling", "scripts/planted.ts", `import { parseLcovLineCoverage } from "../src/tooling/lcov.ts";`],
    ["the web app importing the protocol package", "apps/web/src/planted.ts", `import { SUPPORT } from "@avn/protocol/constants";`],
    ["the SDK importing the protocol package", "packages/sdk/src/planted.ts", `import { SUPPORT } from "@avn/protocol/constants";`],
    ["tests importing the devnet", "test/ts/planted.ts", `import { devAccount } from "../../src/devnet/accounts.ts";`],
  ];
  for (const [what, file, lines] of allowed) {
    it(`allows ${what}`, async function () {
      expect(await layeringErrors(file, lines), lines).to.deep.equal([]);
    });
  }

  it("is part of the repository's lint configuration (npm run lint)", async function () {
    const config = (await new ESLint({ cwd: projectRoot }).calculateConfigForFile(path.join(projectRoot, "src/api/main.ts"))) as {
      rules: Record<string, unknown>;
    };
    expect(config.rules["boundaries/dependencies"]).to.be.an("array").with.property("0").that.is.oneOf([2, "error"]);
  });
});
