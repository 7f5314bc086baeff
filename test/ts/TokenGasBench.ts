import { expect } from "chai";
import { network } from "hardhat";

import { formatGasTable, measureTokenGas } from "../../src/bench/token-gas.js";

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
