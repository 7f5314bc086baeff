import { expect } from "chai";

import { lineCoveragePercent, parseLcovLineCoverage } from "../../../src/tooling/lcov.ts";

describe("lcov line coverage", function () {
  const report = [
    "TN:",
    "SF:contracts/A.sol",
    "DA:1,3",
    "DA:2,0",
    "DA:3,1",
    "DA:4,1",
    "end_of_record",
    "SF:contracts/mocks/B.sol",
    "DA:1,0",
    "DA:2,2",
    "end_of_record",
    "SF:test/solidity/C.t.sol",
    "DA:1,0",
    "end_of_record",
  ].join("\n");

  it("counts found and hit lines per file from DA records", function () {
    expect(parseLcovLineCoverage(report)).to.deep.equal([
      { file: "contracts/A.sol", linesFound: 4, linesHit: 3 },
      { file: "contracts/mocks/B.sol", linesFound: 2, linesHit: 1 },
      { file: "test/solidity/C.t.sol", linesFound: 1, linesHit: 0 },
    ]);
  });

  it("combines the coverage of the files under a prefix only", function () {
    const files = parseLcovLineCoverage(report);
    expect(lineCoveragePercent(files, "contracts/")).to.deep.equal({ percent: (100 * 4) / 6, files: 2 });
    expect(lineCoveragePercent(files, "nothing/")).to.deep.equal({ percent: 0, files: 0 });
    expect(lineCoveragePercent(files, ["contracts/mocks/", "test/"])).to.deep.equal({ percent: (100 * 1) / 3, files: 2 });
  });

  it("ignores DA records outside a file section and unterminated sections", function () {
    expect(parseLcovLineCoverage("DA:1,1\nSF:x.sol\nDA:1,1")).to.deep.equal([]);
  });
});
