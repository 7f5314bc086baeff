import { expect } from "chai";

import { E18, REQUEST_FEE } from "../../../helpers/protocol.ts";
import { ethers, loadFixture, fixture, withJob } from "./fixture.ts";

describe("VerificationRegistry: collateral", function () {
  describe("collateral", function () {
    it("stakeCollateral stakes primary tokens straight into the consumer's collateral", async function () {
      const { registry, staked, consumer } = await loadFixture(fixture);
      expect(await registry.collateralOf(consumer.address)).to.deep.equal([1_000n * E18, 0n]);
      expect(await staked.balanceOf(await registry.getAddress())).to.equal(1_000n * E18);
      await expect(registry.connect(consumer).stakeCollateral(consumer.address, 5n))
        .to.emit(registry, "CollateralDeposited")
        .withArgs(consumer.address, consumer.address, 5n, true);
    });

    it("depositCollateral moves the caller's staked tokens into the caller's own collateral", async function () {
      const { registry, staked, outsider } = await loadFixture(fixture);
      await staked.connect(outsider).stake(50n);
      await staked.connect(outsider).approve(await registry.getAddress(), 50n);
      await expect(registry.connect(outsider).depositCollateral(50n))
        .to.emit(registry, "CollateralDeposited")
        .withArgs(outsider.address, outsider.address, 50n, false);
      expect((await registry.collateralOf(outsider.address)).available).to.equal(50n);
      expect(await staked.balanceOf(outsider.address)).to.equal(0n);
    });

    it("stakeCollateral may fund another consumer (new staked tokens, like stakeFor)", async function () {
      const { registry, outsider, consumer } = await loadFixture(fixture);
      await expect(registry.connect(outsider).stakeCollateral(consumer.address, 7n))
        .to.emit(registry, "CollateralDeposited")
        .withArgs(consumer.address, outsider.address, 7n, true);
      expect((await registry.collateralOf(consumer.address)).available).to.equal(1_000n * E18 + 7n);
    });

    it("withdrawCollateral sends free collateral back to the consumer, never the reserved part", async function () {
      const { registry, staked, consumer } = await withJob();
      expect(await registry.collateralOf(consumer.address)).to.deep.equal([1_000n * E18 - REQUEST_FEE, REQUEST_FEE]);
      await expect(registry.connect(consumer).withdrawCollateral(1_000n * E18 - REQUEST_FEE + 1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_InsufficientCollateral")
        .withArgs(consumer.address, 1_000n * E18 - REQUEST_FEE, 1_000n * E18 - REQUEST_FEE + 1n);
      await expect(registry.connect(consumer).withdrawCollateral(100n))
        .to.emit(registry, "CollateralWithdrawn")
        .withArgs(consumer.address, 100n);
      expect(await staked.balanceOf(consumer.address)).to.equal(100n);
    });

    it("refuses a zero collateral amount or a zero address", async function () {
      const { registry, consumer } = await loadFixture(fixture);
      await expect(registry.connect(consumer).stakeCollateral(consumer.address, 0n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAmount",
      );
      await expect(registry.connect(consumer).stakeCollateral(ethers.ZeroAddress, 1n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAddress",
      );
      await expect(registry.connect(consumer).depositCollateral(0n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAmount",
      );
      await expect(registry.connect(consumer).withdrawCollateral(0n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAmount",
      );
    });
  });
});
