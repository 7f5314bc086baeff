import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { exportTargets, missingFiles, packAndCheck, readmePaths } from "../../../src/tooling/kit-pack.ts";

describe("the kit's packing check: a tarball must hold what its exports and README name", function () {
  it("reads every target of an exports map, nested conditions and subpaths included", function () {
    const exports = {
      ".": { types: "./dist/index.d.ts", import: "./dist/index.js" },
      "./extra": "./dist/extra.js",
      "./package.json": "./package.json",
    };
    expect(exportTargets(exports).sort()).to.deep.equal(["dist/extra.js", "dist/index.d.ts", "dist/index.js", "package.json"]);
    expect(exportTargets(undefined)).to.deep.equal([]);
  });

  it("finds the package's import paths and shipped files a README names, not the reader's own contracts", function () {
    const readme = [
      'import { AttestationConsumer } from "@avn/contracts/AttestationConsumer.sol";',
      'import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";',
      'import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";',
      "remappings: `@avn/contracts/=node_modules/@avn/contracts/`; see `CHANGELOG.md`; write `MyGame.sol`.",
    ].join("\n");
    expect(readmePaths(readme, "@avn/contracts")).to.deep.equal(["AttestationConsumer.sol", "CHANGELOG.md", "interfaces/IStakedToken.sol"]);
    expect(readmePaths("The build is `dist/index.js`.", "@avn/sdk")).to.deep.equal(["dist/index.js"]);
  });

  it("names each promised file the tarball lacks", function () {
    const manifest = { exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } } };
    const readme = "See `CHANGELOG.md`.";
    expect(missingFiles({ files: ["dist/index.js", "package.json"] }, manifest, readme, "@avn/sdk")).to.deep.equal([
      "CHANGELOG.md",
      "dist/index.d.ts",
    ]);
    expect(missingFiles({ files: ["dist/index.js", "dist/index.d.ts", "CHANGELOG.md"] }, manifest, readme, "@avn/sdk")).to.deep.equal([]);
  });

  it("fails a real npm pack whose files list leaves out a file the README imports, and passes it once included", async function () {
    this.timeout(60_000);
    const dir = await mkdtemp(path.join(tmpdir(), "kit-pack-"));
    try {
      const manifest = { name: "@avn/probe", version: "0.1.0", files: ["interfaces/*.sol", "README.md"] };
      await writeFile(path.join(dir, "package.json"), JSON.stringify(manifest));
      await writeFile(path.join(dir, "README.md"), 'import { Probe } from "@avn/probe/Probe.sol";\n');
      await writeFile(path.join(dir, "Probe.sol"), "// SPDX-License-Identifier: MIT\n");
      const error = await packAndCheck(dir, path.join(dir, "out")).then(
        () => undefined,
        (failure: Error) => failure,
      );
      expect(error?.message).to.equal("@avn/probe's tarball lacks files its exports or README name: Probe.sol");
      await writeFile(path.join(dir, "package.json"), JSON.stringify({ ...manifest, files: [...manifest.files, "Probe.sol"] }));
      const packed = await packAndCheck(dir, path.join(dir, "out"));
      expect(packed.files).to.include("Probe.sol");
      expect(packed.size).to.be.greaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
