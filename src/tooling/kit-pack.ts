// Packs the integrators' kit, `@avn/sdk` and `@avn/contracts`, with `npm pack` (the SDK's `prepack` builds
// it first), and checks each tarball against what the package promises: every file its `exports` map and
// its README name must be inside, or an integrator following the README hits a missing file.
import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The kit's packages, as folders of the repository. */
export const KIT_PACKAGES = ["packages/sdk", "packages/contracts"] as const;

/** One packed tarball: `npm pack --json`'s answer, the parts used. */
export interface PackedPackage {
  name: string;
  version: string;
  /** The tarball's path. */
  tarball: string;
  /** Compressed size, in bytes. */
  size: number;
  unpackedSize: number;
  /** The paths inside the package (without the tarball's `package/` prefix). */
  files: string[];
}

/** Runs `npm pack` in `packageDir`, writing the tarball into `destination`. */
export async function packPackage(packageDir: string, destination: string): Promise<PackedPackage> {
  await mkdir(destination, { recursive: true });
  // npm runs on the Node running this: the one the project needs, whatever is first on PATH.
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}` };
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", destination], {
    cwd: packageDir,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  // Release tools read this stdout as JSON, so it must be JSON alone: a lifecycle script that prints on
  // stdout (the SDK's build did, before npm's answer) is a defect of the package, not to be parsed around.
  let answer: unknown;
  try {
    answer = JSON.parse(stdout);
  } catch {
    throw new Error(
      `npm pack --json in ${packageDir} did not print JSON alone (a lifecycle script writes to stdout?): ${stdout.slice(0, 200)}`,
    );
  }
  const [packed] = answer as Array<{
    name: string;
    version: string;
    filename: string;
    size: number;
    unpackedSize: number;
    files: Array<{ path: string }>;
  }>;
  return {
    name: packed.name,
    version: packed.version,
    tarball: path.join(destination, packed.filename),
    size: packed.size,
    unpackedSize: packed.unpackedSize,
    files: packed.files.map((file) => file.path),
  };
}

/** Every string target of an `exports` map (conditions and subpaths, nested), as package-relative paths. */
export function exportTargets(exports: unknown): string[] {
  if (typeof exports === "string") return [exports.replace(/^\.\//, "")];
  if (exports === null || typeof exports !== "object") return [];
  return Object.values(exports).flatMap(exportTargets);
}

/**
 * The package files a README names: import paths under the package's own name (`@avn/contracts/interfaces/X.sol`)
 * and paths of files it ships written as code (`dist/…`, `interfaces/…`, `CHANGELOG.md`). A contract the README
 * shows the reader writing (`MyGame.sol`) is not the package's, so bare `.sol` names are not counted.
 */
export function readmePaths(readme: string, packageName: string): string[] {
  const found = new Set<string>();
  const escaped = packageName.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  for (const match of readme.matchAll(new RegExp(`${escaped}/([\\w./-]+\\.\\w+)`, "g"))) found.add(match[1]);
  for (const match of readme.matchAll(/`\.?\/?((?:dist|interfaces)\/[\w./-]+\.\w+|[\w-]+\.md)`/g)) found.add(match[1]);
  // A subpath that is the package's manifest or an exports key is resolved by npm, not shipped under that name.
  found.delete("package.json");
  return [...found].sort();
}

/** The files `exports` or the README name that the tarball lacks. */
export function missingFiles(
  packed: Pick<PackedPackage, "files">,
  manifest: { exports?: unknown; main?: string; types?: string },
  readme: string,
  packageName: string,
): string[] {
  const named = new Set([
    ...exportTargets(manifest.exports),
    ...[manifest.main, manifest.types].filter((file): file is string => file !== undefined),
    ...readmePaths(readme, packageName),
  ]);
  const shipped = new Set(packed.files);
  return [...named].filter((file) => !shipped.has(file.replace(/^\.\//, ""))).sort();
}

/** Packs one kit package and checks it; throws, naming the files, when the tarball lacks one it promises. */
export async function packAndCheck(packageDir: string, destination: string): Promise<PackedPackage> {
  const packed = await packPackage(packageDir, destination);
  const manifest = JSON.parse(await readFile(path.join(packageDir, "package.json"), "utf8")) as {
    exports?: unknown;
    main?: string;
    types?: string;
  };
  const readme = await readFile(path.join(packageDir, "README.md"), "utf8");
  const missing = missingFiles(packed, manifest, readme, packed.name);
  if (missing.length > 0) throw new Error(`${packed.name}'s tarball lacks files its exports or README name: ${missing.join(", ")}`);
  return packed;
}
