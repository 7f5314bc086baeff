import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { expect } from "chai";
import { build } from "tsdown";
import ts from "typescript";

import { conditionHash as protocolConditionHash } from "@avn/protocol/conditions";
import * as source from "../../../packages/sdk/src/index.ts";

const SDK_DIR = path.resolve(import.meta.dirname, "..", "..", "..", "packages", "sdk");

/** Every module specifier a file imports or re-exports (static `from "…"` and dynamic `import("…")`). */
function specifiersOf(code: string): string[] {
  // TypeScript's own scan of a file's imports: usage examples in a bundled dependency's comments are not imports.
  const { importedFiles } = ts.preProcessFile(code, true, true);
  return [...new Set(importedFiles.map((file) => file.fileName))].sort();
}

/**
 * Where `code` reaches for Node: the globals `Buffer`, `process` and `require` read as variables (not a method of
 * that name, `this.process(…)`, nor a word in a comment), and any `node:` module in a string.
 */
function nodeApiReferences(code: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && ["Buffer", "process", "require"].includes(node.text)) {
      const parent = node.parent;
      const isMemberName =
        (ts.isPropertyAccessExpression(parent) && parent.name === node) || (ts.isMethodDeclaration(parent) && parent.name === node);
      if (!isMemberName) found.push(node.text);
    }
    if (ts.isStringLiteralLike(node) && node.text.startsWith("node:")) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile("index.js", code, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS));
  return found;
}

/**
 * The published build, made by the package's own tsdown config into a scratch folder: what a browser bundle
 * and a Node program import from `@avn/sdk`.
 */
describe("@avn/sdk build: ESM and declarations, viem its only import", function () {
  this.timeout(120_000);
  let outDir: string;
  let js: string;
  let dts: string;

  before(async function () {
    // Outside the repository: a package.json that makes the .js ESM, and the repository's node_modules so
    // that `viem` resolves (the specifier checks below make sure it is all the build imports).
    const scratch = await mkdtemp(path.join(tmpdir(), "avn-sdk-build-"));
    await writeFile(path.join(scratch, "package.json"), JSON.stringify({ type: "module" }));
    await symlink(path.join(SDK_DIR, "..", "..", "node_modules"), path.join(scratch, "node_modules"), "dir");
    outDir = path.join(scratch, "dist");
    await build({ cwd: SDK_DIR, config: path.join(SDK_DIR, "tsdown.config.ts"), outDir, logLevel: "silent" });
    js = await readFile(path.join(outDir, "index.js"), "utf8");
    dts = await readFile(path.join(outDir, "index.d.ts"), "utf8");
  });
  after(async function () {
    await rm(path.dirname(outDir), { recursive: true, force: true });
  });

  it("writes the files package.json's exports name", async function () {
    const manifest = JSON.parse(await readFile(path.join(SDK_DIR, "package.json"), "utf8")) as {
      exports: { ".": { types: string; import: string } };
      dependencies: Record<string, string>;
    };
    expect(manifest.exports["."]).to.deep.equal({ types: "./dist/index.d.ts", import: "./dist/index.js" });
    expect(Object.keys(manifest.dependencies)).to.deep.equal(["viem"]);
    expect(js.length).to.be.greaterThan(0);
    expect(dts.length).to.be.greaterThan(0);
  });

  it("imports nothing but viem, and no Node API, in the JavaScript", function () {
    expect(specifiersOf(js)).to.deep.equal(["viem", "viem/actions"]);
    // The protocol package and what it reaches of its dependencies are inside, tree-shaken: no ed25519, no RPC client.
    expect(js).to.include("function conditionHash(");
    expect(nodeApiReferences(js)).to.deep.equal([]);
    expect(js).to.not.match(/ed25519|createSolanaRpc/i);
  });

  it("declares its types without importing @avn/protocol or anything but viem", function () {
    expect(specifiersOf(dts)).to.deep.equal(["viem"]);
    expect(dts).to.not.include("@avn/protocol");
    // The declarations stand alone: a consumer's compiler finds every type they name.
    const file = path.join(outDir, "index.d.ts");
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
      types: [],
      // Off, or declaration files go unchecked, ours included; only problems in ours count below.
      skipLibCheck: false,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file?.fileName === file)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    expect(problems).to.deep.equal([]);
  });

  it("exports what the source exports, and works: exact integers, the protocol's condition hash", async function () {
    const built = (await import(pathToFileURL(path.join(outDir, "index.js")).href)) as typeof source;
    expect(Object.keys(built).sort()).to.deep.equal(Object.keys(source).sort());
    expect(built.parseJsonExact('{"balance":9007199254753337}')).to.deep.equal({ balance: 9007199254753337n });
    const condition = { any: [{ chain: "solana", token_mint_address: "EPjFWdd5AufqSSqeM2qrkMwS2LvtKzZ4oHvXUJvHkwkP", min: "007" }] };
    expect(built.conditionHash(condition)).to.equal(protocolConditionHash(condition));
    expect(() => built.conditionHash({ chain: "solana", token_mint_address: "not base58!" })).to.throw(
      built.ConditionInputError,
      "condition.token_mint_address must be a base58 Solana address of 32 bytes",
    );
    // One AvnError in the bundle: the protocol's errors and the SDK's own are both its instances.
    expect(() => built.conditionHash({ chain: "solana", token_mint_address: "not base58!" })).to.throw(built.AvnError);
    expect(() => built.toContractAttestation(null as never))
      .to.throw(built.MalformedAttestationError)
      .that.is.instanceOf(built.AvnError)
      .and.includes({ name: "MalformedAttestationError", code: "MALFORMED_ATTESTATION", path: "" });
  });
});
