import { expect } from "chai";
import { network } from "hardhat";

import { formatGasTable, measureTokenGas } from "../../src/bench/token-gas.js";
import { BATCH_SIZE, formatTargetTable, GAS_TARGETS, measureVerificationGas } from "../../src/bench/verification-gas.js";

const { ethers, networkHelpers } = await network.create();

describe("bench:gas measurement", function () {
  it("measures every operation as a mined transaction beside the plain ERC-20 baseline", async function () {
    const rows = await measureTokenGas(ethers, networkHelpers);
    expect(rows.map((row) => row.operation)).to.deep.equal([
      "PlainERC20.transfer (baseline)",
      "PrimaryToken.transfer",
      "PrimaryToken.permit",
      "PrimaryToken.transferFrom (after permit)",
      "StakedToken.stake (first)",
      "StakedToken.stake (again)",
      "StakedToken.requestRedemption",
      "StakedToken.cancelRedemption",
      "StakedToken.completeRedemption",
    ]);
    for (const row of rows) expect(row.gasUsed, row.operation).to.be.greaterThan(21_000n);
    // Votes checkpoints make the primary token's transfer dearer than the plain one, never cheaper.
    expect(rows[1].gasUsed).to.be.greaterThanOrEqual(rows[0].gasUsed);

    const table = formatGasTable(rows).split("\n");
    expect(table).to.have.length(rows.length + 1);
    expect(table[1]).to.match(/PlainERC20\.transfer \(baseline\)\s+\d+\s+1\.00x$/);
  });
});

describe("bench:gas verification measurement", function () {
  it("measures every node and consumer operation, and meets the issue's gas targets", async function () {
    const rows = await measureVerificationGas(ethers, networkHelpers);
    expect(rows).to.have.length(16);
    for (const row of rows) expect(row.gasUsed, row.operation).to.be.greaterThan(21_000n / BigInt(BATCH_SIZE));
    for (const target of GAS_TARGETS) {
      const row = rows.find((candidate) => candidate.operation === target.operation);
      expect(row, target.operation).to.not.equal(undefined);
      expect(row!.gasUsed, target.operation).to.be.lessThanOrEqual(target.atMost);
    }
    expect(formatTargetTable(rows)).to.match(/delegate \(1 license, new operator\)\s+\d+\s+met:/);
  });
});
