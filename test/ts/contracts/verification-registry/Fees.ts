import { expect } from "chai";

import { REQUEST_FEE } from "../../../helpers/protocol.ts";
import { ethers, loadFixture, fixture, HOLDER, TOKEN, submit, withJob } from "./fixture.ts";

describe("VerificationRegistry: fees", function () {
  describe("fees", function () {
    it("the licenses' current owners claim the fee shares in staked tokens: burned, and their backing staked for the owner", async function () {
      const { registry, primary, staked, alice, burnerA, burnerB } = await withJob();
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n);
      const [primaryBefore, stakedBefore, supplyBefore] = [
        await primary.balanceOf(alice.address),
        await staked.balanceOf(alice.address),
        await staked.totalSupply(),
      ];
      const registryAddress = await registry.getAddress();
      await expect(registry.connect(alice).claimFees([1n]))
        .to.emit(registry, "FeesClaimed")
        .withArgs(1n, alice.address, REQUEST_FEE / 2n)
        .and.to.emit(staked, "BurnedForService")
        .withArgs(registryAddress, registryAddress, REQUEST_FEE / 2n);
      expect(await staked.balanceOf(alice.address)).to.equal(stakedBefore + REQUEST_FEE / 2n);
      expect(await primary.balanceOf(alice.address)).to.equal(primaryBefore);
      // Burned and staked again: the supply is unchanged, and nothing stays with the registry.
      expect(await staked.totalSupply()).to.equal(supplyBefore);
      expect(await primary.balanceOf(registryAddress)).to.equal(0n);
      expect(await registry.totalFeesBurned()).to.equal(REQUEST_FEE / 2n);
      await expect(registry.connect(alice).claimFees([1n])).to.be.revertedWithCustomError(registry, "VerificationRegistry_NothingToClaim");
      await expect(registry.connect(alice).claimFees([2n]))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_NotLicenseOwner")
        .withArgs(2n, alice.address);
    });

    it("fees travel with the license: its owner at claim time is paid", async function () {
      const { registry, staked, license, alice, outsider, burnerA, burnerB } = await withJob();
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n);
      await license.connect(alice).transferFrom(alice.address, outsider.address, 1n);
      await expect(registry.connect(alice).claimFees([1n]))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_NotLicenseOwner")
        .withArgs(1n, alice.address);
      const before = await staked.balanceOf(outsider.address);
      await registry.connect(outsider).claimFees([1n]);
      expect(await staked.balanceOf(outsider.address)).to.equal(before + REQUEST_FEE / 2n);
    });

    it("a consumer voting on its own job with its own license gets its share back only as staked tokens", async function () {
      const { registry, primary, staked, license, nodeRegistry, admin, consumer, burnerA, burnerB } = await loadFixture(fixture);
      await nodeRegistry.connect(admin).setQuorum(3n);
      await license.connect(consumer).buy(1n, ethers.MaxUint256); // id 4, run by the consumer itself
      await nodeRegistry.connect(consumer).delegate([4n], consumer.address);
      await nodeRegistry.connect(consumer)["heartbeat()"]();
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await submit(registry, burnerA, 1n, [1n], 5n);
      await submit(registry, burnerB, 1n, [2n], 5n);
      await expect(submit(registry, consumer, 1n, [4n], 5n)).to.emit(registry, "VerificationFulfilled");
      const primaryBefore = await primary.balanceOf(consumer.address);
      const stakedBefore = await staked.balanceOf(consumer.address);
      await registry.connect(consumer).claimFees([4n]);
      const share = REQUEST_FEE / 3n;
      expect(await staked.balanceOf(consumer.address)).to.equal(stakedBefore + share);
      // No primary token comes back at once: turning the share into primary tokens takes a redemption,
      // which pays at most the schedule's rate (below 100%) after its unlock period.
      expect(await primary.balanceOf(consumer.address)).to.equal(primaryBefore);
      const quickest = await staked.previewRedemption(share, (await staked.rateSchedule()).minPeriod);
      expect(quickest).to.be.lessThan(share);
    });

    it("splits an uneven fee exactly: the first agreeing license takes the remainder", async function () {
      const { registry, nodeRegistry, admin, consumer, burnerA, burnerB, burnerC } = await loadFixture(fixture);
      await registry.connect(admin).setRequestFee(10n);
      await nodeRegistry.connect(admin).setQuorum(3n);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await submit(registry, burnerB, 1n, [2n], 1n);
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerC, 1n, [3n], 1n);
      expect([await registry.claimableFees(2n), await registry.claimableFees(1n), await registry.claimableFees(3n)]).to.deep.equal([
        4n,
        3n,
        3n,
      ]);
    });

    it("a zero fee finalizes and leaves nothing to claim", async function () {
      const { registry, staked, admin, alice, consumer, burnerA, burnerB } = await loadFixture(fixture);
      await registry.connect(admin).setRequestFee(0n);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      const supply = await staked.totalSupply();
      await submit(registry, burnerA, 1n, [1n], 1n);
      await expect(submit(registry, burnerB, 1n, [2n], 1n)).to.emit(registry, "VerificationFulfilled");
      expect(await staked.totalSupply()).to.equal(supply);
      await expect(registry.connect(alice).claimFees([1n])).to.be.revertedWithCustomError(registry, "VerificationRegistry_NothingToClaim");
    });
  });
});
