import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * What the operator's scripts read, besides node_modules: copied into the rehearsal's project (`vendor`: the
 * DelegateRegistry source its devnet builds, src/devnet/delegate-registry.ts).
 */
const COPIED = ["contracts", "scripts", "src", "vendor", "hardhat.config.ts", "remappings.txt", "tsconfig.json", "package.json"];
/** Build output, copied so that Hardhat finds every contract compiled and compiles nothing. */
const BUILD_OUTPUT = ["artifacts", "cache", "typechain-types"];
/** Of deploy/: the modules, the committed parameters and OP chain files; never another chain's records. */
const DEPLOY_PARTS = ["modules", "parameters", "op-chains"];

export interface ProjectCopy {
  root: string;
  remove(): Promise<void>;
}

/**
 * A temporary copy of the project in which the operator's scripts run as they would in the repository:
 * they resolve the project root from their own location, so they write deploy/deployments/chain-<id>/ and
 * read deploy/op-chains/ and deploy/parameters/ of the copy, and the repository's records stay untouched.
 * node_modules is a symlink (the workspace packages it links resolve to the repository's own). Hardhat's
 * compile cache names files by absolute path: its paths are moved to the copy, else Hardhat would compile
 * every contract again (measured: 1 min 50 s on two cores, against 5 s with the cache moved). `into`: a
 * folder to create for it (it must not exist), else a new one in `parent` (default: the system's).
 */
export async function copyProject(projectRoot: string, options: { parent?: string; into?: string } = {}): Promise<ProjectCopy> {
  const root = options.into ?? (await mkdtemp(path.join(options.parent ?? tmpdir(), "avn-rehearsal-")));
  if (options.into !== undefined) await mkdir(root, { recursive: false });
  try {
    for (const entry of [...COPIED, ...BUILD_OUTPUT]) await cp(path.join(projectRoot, entry), path.join(root, entry), { recursive: true });
    // The Solidity sources of the @avn/contracts workspace package are project sources (hardhat.config.ts).
    await cp(path.join(projectRoot, "packages", "contracts"), path.join(root, "packages", "contracts"), { recursive: true });
    await mkdir(path.join(root, "deploy", "deployments"), { recursive: true });
    for (const part of DEPLOY_PARTS) await cp(path.join(projectRoot, "deploy", part), path.join(root, "deploy", part), { recursive: true });
    await symlink(path.join(projectRoot, "node_modules"), path.join(root, "node_modules"), "dir");
    const cacheFile = path.join(root, "cache", "compile-cache.json");
    const cache = await readFile(cacheFile, "utf8");
    await writeFile(cacheFile, cache.replaceAll(JSON.stringify(`${projectRoot}/`).slice(1, -1), JSON.stringify(`${root}/`).slice(1, -1)));
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

/**
 * A copy made earlier by `copyProject` (npm test makes one right after the plain build, before the coverage
 * build replaces it: the operator's scripts would otherwise compile every contract again in the copy).
 */
export function existingProjectCopy(root: string): ProjectCopy {
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}
