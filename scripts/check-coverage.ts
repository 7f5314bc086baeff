// Fails when line coverage of contracts/ in coverage/lcov.info (written by `hardhat test --coverage`)
// is below the threshold. Usage: node scripts/check-coverage.ts  (MIN_LINE_COVERAGE overrides 95).
import { readFile } from "node:fs/promises";

import { lineCoveragePercent, parseLcovLineCoverage } from "../src/tooling/lcov.ts";

const threshold = Number(process.env.MIN_LINE_COVERAGE ?? "95");
if (!Number.isFinite(threshold)) {
  console.error(`MIN_LINE_COVERAGE must be a number, got "${process.env.MIN_LINE_COVERAGE}".`);
  process.exit(1);
}
const lcov = await readFile("coverage/lcov.info", "utf8");
const { percent, files } = lineCoveragePercent(parseLcovLineCoverage(lcov), "contracts/");

if (files === 0) {
  console.error("No contracts/ file in coverage/lcov.info: run `hardhat test --coverage` first.");
  process.exit(1);
}
console.log(`Line coverage of contracts/: ${percent.toFixed(2)}% over ${files} files (minimum ${threshold}%).`);
if (percent < threshold) process.exit(1);
