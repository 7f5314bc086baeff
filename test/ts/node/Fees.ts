import { expect } from "chai";
import { parseUnits } from "ethers";

import { bumpedFees } from "../../../src/node/fees.ts";

const gwei = (value: string) => parseUnits(value, "gwei");

describe("circuit node: fee bumps", function () {
  const previous = { maxFeePerGas: gwei("10"), maxPriorityFeePerGas: gwei("1") };
  const current = { maxFeePerGas: gwei("3"), maxPriorityFeePerGas: gwei("1") };

  it("raises both fields by 12.5% when the provider's fees are lower", function () {
    expect(bumpedFees(previous, current, gwei("1000"))).to.deep.equal({
      maxFeePerGas: gwei("11.25") + 1n,
      maxPriorityFeePerGas: gwei("1.125") + 1n,
    });
  });

  it("takes the fee cap to twice a risen base fee plus the tip, so the replacement clears it", function () {
    const fees = bumpedFees(previous, current, gwei("1000"), gwei("40"))!;
    expect(fees.maxFeePerGas).to.equal(gwei("80") + gwei("1.125") + 1n);
    expect(fees.maxPriorityFeePerGas).to.equal(gwei("1.125") + 1n);
  });

  it("stays under the cap, and gives up when the cap leaves less than the 10% pools require", function () {
    expect(bumpedFees(previous, current, gwei("20"), gwei("40"))!.maxFeePerGas).to.equal(gwei("20"));
    expect(bumpedFees(previous, current, gwei("10.5"))).to.equal(undefined);
  });
});
