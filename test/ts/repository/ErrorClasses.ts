import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

import { expect } from "chai";

const root = path.resolve(import.meta.dirname, "..", "..", "..");
/** Where the services, the command lines, the shared packages and the web app keep their code. */
const SOURCE_FOLDERS = ["src", "scripts", "packages/protocol/src", "packages/bridge/src", "apps/web/src"];

/** Every `class Name extends Base` of the source folders, with the file it is in. */
function errorClassDeclarations(): Array<{ name: string; base: string; file: string }> {
  return SOURCE_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(ts|tsx|mts|mjs)$/.test(entry.name))
      .flatMap((entry) => {
        const file = path.relative(root, path.join(entry.parentPath, entry.name));
        const text = readFileSync(path.join(root, file), "utf8");
        return [...text.matchAll(/\bclass\s+(\w+)(?:<[^>{]*>)?\s+extends\s+(\w+)/g)].map((match) => ({
          name: match[1],
          base: match[2],
          file,
        }));
      }),
  );
}

describe("error classes: one base, unique names (docs/architecture.md)", function () {
  const classes = errorClassDeclarations();
  const baseOf = new Map(classes.map((entry) => [entry.name, entry.base]));
  /** The chain of bases of `name` up to a class these folders do not declare (`Error`, `AvnError`'s own base, a library's). */
  const chainOf = (name: string): string[] => {
    const chain = [name];
    for (let base = baseOf.get(name); base !== undefined && !chain.includes(base); base = baseOf.get(base)) chain.push(base);
    return chain;
  };
  const errors = classes.filter((entry) => chainOf(entry.name).some((link) => link === "Error" || link === "AvnError"));

  it("finds the error classes it checks (the scan reads the folders)", function () {
    expect(errors.map((entry) => entry.name)).to.include.members(["AvnError", "ApiError", "SourceError", "QuorumNotReachedError"]);
  });

  it("has every error class extend AvnError, whose code programs branch on", function () {
    const outside = errors
      .filter((entry) => entry.name !== "AvnError" && !chainOf(entry.name).includes("AvnError"))
      .map((entry) => `${entry.name} (${entry.file}) extends ${entry.base}`);
    expect(outside).to.deep.equal([]);
  });

  it("gives no two error classes one name", function () {
    const files = new Map<string, string[]>();
    for (const entry of errors) files.set(entry.name, [...(files.get(entry.name) ?? []), entry.file]);
    expect([...files].filter(([, where]) => where.length > 1)).to.deep.equal([]);
  });
});
