import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { formatStressTable, runStress } from "../../../src/tooling/stress.ts";

describe("npm run test:stress's runner (src/tooling/stress.ts)", function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "avn-stress-test-"));
  });
  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it("runs each file N times in a row beside the hogs, keeps each run's output and counts the passes", async function () {
    // A "test file" whose second run fails: each run appends to a counter file of its own name.
    const command = (file: string) =>
      `"${process.execPath}" -e ${JSON.stringify(
        `const fs = require("node:fs"); const f = ${JSON.stringify(path.join(dir, "count-"))} + ${JSON.stringify(file)};` +
          `fs.appendFileSync(f, "x"); const n = fs.readFileSync(f, "utf8").length;` +
          `console.log("run " + n + " of " + ${JSON.stringify(file)}); process.exit(${JSON.stringify(file)} === "flaky" && n === 2 ? 1 : 0);`,
      )}`;
    const lines: string[] = [];
    const results = await runStress({
      files: ["steady", "flaky"],
      runs: 3,
      hogs: 1,
      commandFor: command,
      logDir: path.join(dir, "logs"),
      cwd: dir,
      log: (line) => lines.push(line),
    });
    expect(results.map((result) => `${result.file} ${result.run} ${result.passed}`)).to.deep.equal([
      "steady 1 true",
      "steady 2 true",
      "steady 3 true",
      "flaky 1 true",
      "flaky 2 false",
      "flaky 3 true",
    ]);
    // One after another: each run saw the counter of the runs before it.
    expect(await readFile(results[4].logFile, "utf8")).to.equal("run 2 of flaky\n");
    expect(lines[4]).to.match(/^flaky run 2\/3: FAILED \(.*flaky-2\.log\) in \d+\.\d s$/);
    const table = formatStressTable(results);
    expect(table[0]).to.match(/^file\s+passed\s+median s\s+slowest s$/);
    expect(table[1]).to.match(/^steady\s+3\/3\s/);
    expect(table[2]).to.match(/^flaky\s+2\/3\s/);
  });

  it("keeps the hog busy while the runs go, and stops it after", async function () {
    // The run looks for the hog among the machine's processes while it runs.
    const probe = path.join(dir, "hog-seen");
    const command = () =>
      `"${process.execPath}" -e ${JSON.stringify(
        `const { execSync } = require("node:child_process"); const seen = execSync("ps -eo args").toString().split("\\n").some((line) => line.includes("for (;;) {}"));` +
          `require("node:fs").writeFileSync(${JSON.stringify(probe)}, String(seen));`,
      )}`;
    await runStress({
      files: ["one"],
      runs: 1,
      hogs: 1,
      commandFor: command,
      logDir: path.join(dir, "logs"),
      cwd: dir,
      log: () => undefined,
    });
    expect(await readFile(probe, "utf8")).to.equal("true");
    // Once it returned, no hog is left.
    const { execSync } = await import("node:child_process");
    const hogsLeft = execSync("ps -eo pid,args")
      .toString()
      .split("\n")
      .filter((line) => line.includes("-e for (;;) {}"));
    expect(hogsLeft).to.deep.equal([]);
  });
});
