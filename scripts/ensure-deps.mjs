// Runs before `npm start` and `npm test` (npm's prestart/pretest hooks), so that the README's two commands
// work on a fresh clone with any Node that runs npm:
// 1. when the Node on PATH is older than 22.18, it gets this project's own Node 22 into .node/ and links it
//    as node_modules/.bin/node, which npm puts first on PATH for every script (scripts/local-node.mjs);
// 2. it installs the locked dependencies (npm ci) on that Node when they are missing, older than
//    package-lock.json, or were installed by npm running on an older Node (which skips the packages that
//    need Node 22, such as Hardhat's native EDR, and Hardhat then fails with HHE27).
// `node scripts/ensure-deps.mjs --after-install` is the root package's postinstall: it records which Node
// npm ran on, for step 2. Plain JavaScript for Node 18 and newer, with no dependencies: it runs before any
// are installed.
import { execSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

import { MINIMUM, ensureNode, isRecentEnough, linkLocalNode, root, unlinkLocalNode, versionOf } from "./local-node.mjs";

const lockfile = path.join(root, "package-lock.json");
// npm writes this hidden lockfile on every install: older than package-lock.json means stale.
const installed = path.join(root, "node_modules", ".package-lock.json");
const installRecord = path.join(root, "node_modules", ".installed-with-node.json");

/**
 * The Node that the npm running this lifecycle script is on (npm_node_execpath; npm_config_user_agent
 * would not do: a nested npm inherits its parent's).
 */
function npmNodeVersion() {
  const npmNode = process.env.npm_node_execpath;
  if (npmNode === undefined) return null;
  return npmNode === process.execPath ? process.versions.node : versionOf(npmNode);
}

function recordInstall() {
  const node = npmNodeVersion();
  if (node === null || !existsSync(path.dirname(installRecord))) return;
  writeFileSync(installRecord, `${JSON.stringify({ node })}\n`);
  if (!isRecentEnough(node)) {
    console.warn(
      `npm ran on Node v${node}, older than ${MINIMUM}, and skipped the packages that need Node 22 (Hardhat's ` +
        "native EDR): the next `npm start` or `npm test` reinstalls them on this project's own Node " +
        "(`node scripts/ensure-deps.mjs` does it now).",
    );
  }
}

/** Why the dependencies must be (re)installed, or null. */
function staleReason(systemNodeIsOld) {
  if (!existsSync(installed)) return "no node_modules";
  if (statSync(installed).mtimeMs < statSync(lockfile).mtimeMs) return "node_modules older than package-lock.json";
  if (existsSync(installRecord)) {
    const { node } = JSON.parse(readFileSync(installRecord, "utf8"));
    if (!isRecentEnough(node)) return `node_modules installed by npm on Node v${node}`;
  } else if (systemNodeIsOld) {
    // Installed without the record (before it existed, or with --ignore-scripts), most likely by npm on
    // this old system Node.
    return "node_modules installed by npm on an older Node";
  }
  return null;
}

if (process.argv.includes("--after-install")) {
  try {
    recordInstall();
  } catch (error) {
    console.warn(`scripts/ensure-deps.mjs --after-install: ${error.message}`); // never fails an install
  }
  process.exit(0);
}

let node;
try {
  node = ensureNode();
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const env = node.binDir === null ? process.env : { ...process.env, PATH: `${node.binDir}${path.delimiter}${process.env.PATH ?? ""}` };

const reason = staleReason(node.binDir !== null);
if (reason !== null) {
  console.log(`Installing the locked dependencies (npm ci: ${reason})…`);
  execSync("npm ci", { stdio: "inherit", cwd: root, env });
  // The postinstall hook writes the same, unless install scripts are turned off (ignore-scripts).
  writeFileSync(installRecord, `${JSON.stringify({ node: node.local ?? node.system })}\n`);
}

if (node.binDir === null) {
  unlinkLocalNode();
} else {
  linkLocalNode();
  console.log(
    `npm scripts run on this project's Node v${node.local} (.node/; the Node on PATH is ` +
      `${node.system === null ? "missing" : `v${node.system}`}).`,
  );
}
