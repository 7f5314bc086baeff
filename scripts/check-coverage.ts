// Fails when line coverage of the contracts in coverage/lcov.info (written by `hardhat test --coverage`) is below
// the threshold: the repository's (contracts/) and the @avn/contracts package's (packages/contracts/, whose
// interfaces have no lines; AttestationConsumer.sol does). Usage: node scripts/check-coverage.ts
// (MIN_LINE_COVERAGE overrides 95).
import { readFile } from "node:fs/promises";

import { filesUnder, lineCoveragePercent, parseLcovLineCoverage } from "../src/tooling/lcov.ts";

const FOLDERS = ["contracts/", "packages/contracts/"];

const threshold = Number(process.env.MIN_LINE_COVERAGE ?? "95");
if (!Number.isFinite(threshold)) {
  console.error(`MIN_LINE_COVERAGE must be a number, got "${process.env.MIN_LINE_COVERAGE}".`);
  process.exit(1);
}
const lcov = await readFile("coverage/lcov.info", "utf8");
const coverage = parseLcovLineCoverage(lcov);
const { percent, files } = lineCoveragePercent(coverage, FOLDERS);

if (files === 0) {
  console.error(`No ${FOLDERS.join(" or ")} file in coverage/lcov.info: run \`hardhat test --coverage\` first.`);
  process.exit(1);
}
for (const file of filesUnder(coverage, FOLDERS).sort((a, b) => a.file.localeCompare(b.file))) {
  const filePercent = file.linesFound === 0 ? 100 : (100 * file.linesHit) / file.linesFound;
  console.log(`  ${filePercent.toFixed(2).padStart(6)}%  ${file.file} (${file.linesHit}/${file.linesFound} lines)`);
}
console.log(`Line coverage of ${FOLDERS.join(" and ")}: ${percent.toFixed(2)}% over ${files} files (minimum ${threshold}%).`);
if (percent < threshold) process.exit(1);
