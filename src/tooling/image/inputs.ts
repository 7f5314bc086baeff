// What the image is built from, as one hash: the Dockerfile, the base image, and every file its COPY
// instructions take from the build context (without what .dockerignore leaves out). buildah keeps no layer
// cache here (`--layers` would copy the whole tree for each instruction on the vfs driver, a minute each once
// node_modules is in), so the image carries this hash as a label, and a build whose hash matches is skipped.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";

/** The label holding the hash. */
export const INPUTS_LABEL = "org.avn.build-inputs";

/** The context paths of the Dockerfile's COPY instructions that read the build context (not `--from` a stage). */
export function copiedPaths(dockerfile: string): string[] {
  const found = new Set<string>();
  const joined = dockerfile.replace(/\\\n/g, " ");
  for (const line of joined.split("\n")) {
    const words = line.trim().split(/\s+/);
    if (words[0]?.toUpperCase() !== "COPY" && words[0]?.toUpperCase() !== "ADD") continue;
    const args = words.slice(1).filter((word) => !word.startsWith("--"));
    if (words.some((word) => word.startsWith("--from="))) continue;
    for (const source of args.slice(0, -1)) found.add(source.replace(/^\.\//, "").replace(/\/$/, ""));
  }
  return [...found].sort();
}

/** The .dockerignore's patterns as a test (the forms it uses: names at the root, and `<dir>/*\/<name>`). */
async function ignoredBy(root: string): Promise<(relative: string) => boolean> {
  const file = path.join(root, ".dockerignore");
  const patterns = existsSync(file)
    ? (await readFile(file, "utf8"))
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "" && !line.startsWith("#"))
    : [];
  const expressions = patterns.map(
    (pattern) =>
      new RegExp(
        `^${pattern
          .replace(/^\//, "")
          .replace(/[.+^${}()|[\]\\]/g, "\\$&")
          .replace(/\*/g, "[^/]*")}(/|$)`,
      ),
  );
  return (relative) => expressions.some((expression) => expression.test(relative));
}

/** The files under `relative` (a file or a folder), relative to `root`, without ignored ones. */
async function filesUnder(root: string, relative: string, ignored: (relative: string) => boolean): Promise<string[]> {
  if (ignored(relative)) return [];
  const full = path.join(root, relative);
  if (!(await stat(full)).isDirectory()) return [relative];
  const entries = await readdir(full, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => filesUnder(root, path.posix.join(relative, entry.name), ignored)));
  return nested.flat();
}

/** The hash of what a build of `root`'s Dockerfile on `base` would use. */
export async function buildInputsHash(root: string, base: string): Promise<string> {
  const dockerfile = await readFile(path.join(root, "Dockerfile"), "utf8");
  const ignored = await ignoredBy(root);
  const files = [...new Set((await Promise.all(copiedPaths(dockerfile).map((source) => filesUnder(root, source, ignored)))).flat())].sort();
  const hash = createHash("sha256").update(`base ${base}\n`).update(dockerfile);
  for (const file of files) hash.update(`\0${file}\0`).update(await readFile(path.join(root, file)));
  return hash.digest("hex");
}
