// `npm run test:stress -- [--runs N] [--hogs H] <test file or folder…>`: builds once, then runs each mocha test
// file N times in a row (default 5) while H busy processes (default 1) keep that many cores at 100%, and prints
// how many runs of each passed (src/tooling/stress.ts). A folder is one suite: its test files in one mocha
// process, as npm test runs them (one shared devnet for all). Each run's output is kept in a log file, named
// for the failed ones. Exits 1 when any run failed. Example:
//   npm run test:stress -- --runs 3 test/ts/e2e/VerificationNetwork.ts test/ts/web
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

import { formatStressTable, runStress } from "../src/tooling/stress.ts";

const root = path.resolve(import.meta.dirname, "..");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: "string", default: "5" }, hogs: { type: "string", default: "1" } },
});
const runs = Number(values.runs);
const hogs = Number(values.hogs);
if (!Number.isSafeInteger(runs) || runs < 1 || !Number.isSafeInteger(hogs) || hogs < 0) {
  console.error("--runs must be a positive integer and --hogs a whole number.");
  process.exit(2);
}
const missing = positionals.filter((file) => !existsSync(path.resolve(root, file)));
if (positionals.length === 0 || missing.length > 0) {
  console.error(
    positionals.length === 0 ? "Name the test files to run, e.g. test/ts/devnet/OpDevnet.ts." : `No such file: ${missing.join(", ")}`,
  );
  process.exit(2);
}
/** A test file, or a folder's test files (recursively, in name order). */
function testFilesOf(target: string): string[] {
  const absolute = path.resolve(root, target);
  if (!statSync(absolute).isDirectory()) return [target];
  return readdirSync(absolute, { recursive: true, encoding: "utf8" })
    .filter((file) => /\.ts$/.test(file))
    .sort()
    .map((file) => path.join(target, file));
}

// One build, before any run and with nothing beside it; the runs then build nothing (--no-compile).
if (spawnSync("hardhat build --quiet", { cwd: root, shell: true, stdio: "inherit" }).status !== 0) process.exit(1);
const logDir = path.join(tmpdir(), `avn-stress-${new Date().toISOString().replace(/[:.]/g, "-")}`);
console.log(`${runs} runs of each file beside ${hogs} busy ${hogs === 1 ? "core" : "cores"}; logs in ${logDir}`);
const results = await runStress({
  files: positionals,
  runs,
  hogs,
  logDir,
  cwd: root,
  commandFor: (target) =>
    `hardhat test mocha --no-compile ${testFilesOf(target)
      .map((file) => JSON.stringify(file))
      .join(" ")}`,
  log: (line) => console.log(line),
});
console.log();
for (const line of formatStressTable(results)) console.log(line);
process.exit(results.every((result) => result.passed) ? 0 : 1);
