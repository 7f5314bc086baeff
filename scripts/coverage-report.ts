// The mocha tests' coverage report, once, after npm test's mocha processes ended: each saved its hits to a file
// of its own under coverage/data/mocha/ and made no report (src/tooling/coverage/collect-only.ts). Run as
// `hardhat run --coverage scripts/coverage-report.ts`: the build that `hardhat run` starts with finds the
// instrumented contracts of `hardhat build --coverage` up to date and compiles nothing, but its instrumentation
// records the statement map the report needs. The report is then made by Hardhat's coverage plugin itself (the
// end-of-run hook of the mocha runner), merging every saved file: coverage/lcov.info, coverage/html/ and the
// table printed here.
import hre from "hardhat";

import { COLLECT_ONLY_VARIABLE } from "../src/tooling/coverage/collect-only.ts";

if (hre.globalOptions.coverage !== true) {
  console.error("Run it as `hardhat run --coverage scripts/coverage-report.ts`: without --coverage there is no statement map.");
  process.exit(1);
}
// This process makes the report that the collecting processes left out.
delete process.env[COLLECT_ONLY_VARIABLE];
await hre.hooks.runHandlerChain("test", "onTestRunDone", ["mocha"], async () => {});
