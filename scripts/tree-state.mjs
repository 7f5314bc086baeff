// `node scripts/tree-state.mjs save|check`: the first and last steps of `npm test`. Tests must leave the
// working tree as they found it (no generated records, no stray files); `save` records what git sees as
// changed or untracked (each path with a hash of its content), `check` compares and fails naming every
// path the run added, removed or changed. Ignored files (build output, node_modules, .devnet) do not
// count. Plain JavaScript without dependencies, like ensure-deps.mjs; outside a git checkout it says so
// and checks nothing.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const STATE_FILE = path.join("node_modules", ".cache", "avn-tree-state.json");

function treeState() {
  const status = execFileSync("git", ["status", "--porcelain=v1", "-z", "--untracked-files=all"], { encoding: "utf8" });
  const state = {};
  for (const entry of status.split("\0").filter((line) => line.length > 3)) {
    const file = entry.slice(3);
    state[file] = existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : "deleted";
  }
  return state;
}

try {
  execFileSync("git", ["rev-parse", "--is-inside-work-tree"], { stdio: "ignore" });
} catch {
  console.log("Not a git checkout: the check that tests leave the working tree unchanged is skipped.");
  process.exit(0);
}

const command = process.argv[2];
if (command === "save") {
  mkdirSync(path.dirname(STATE_FILE), { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify(treeState()));
} else if (command === "check") {
  if (!existsSync(STATE_FILE)) {
    console.error(`No saved tree state (${STATE_FILE}): run \`node scripts/tree-state.mjs save\` before the tests.`);
    process.exit(1);
  }
  const before = JSON.parse(readFileSync(STATE_FILE, "utf8"));
  const after = treeState();
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((file) => before[file] !== after[file])
    .sort()
    .map((file) => `  ${file} (${before[file] === undefined ? "added" : after[file] === undefined ? "restored or removed" : "changed"})`);
  if (changed.length > 0) {
    console.error(`The tests changed the working tree; they must leave it as they found it:\n${changed.join("\n")}`);
    process.exit(1);
  }
  console.log("The working tree is as the tests found it.");
} else {
  console.error("usage: node scripts/tree-state.mjs save|check");
  process.exit(2);
}
