import { expect } from "chai";

import { EPOCH_DURATION, REQUEST_FEE } from "../../../helpers/protocol.ts";
import { ethers, loadFixture, time, fixture, HOLDER, TOKEN, submit, withJob } from "./fixture.ts";

describe("VerificationRegistry: fees and epoch rewards", function () {
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

  describe("epoch rewards", function () {
    it("shares an epoch's pool by agreeing votes, paid in staked tokens to the current owner", async function () {
      const { registry, staked, admin, consumer, alice, bob, carol, burnerA, burnerB, burnerC } = await loadFixture(fixture);
      await expect(registry.connect(admin).fundEpochRewards(0n, 900n))
        .to.emit(registry, "EpochRewardsFunded")
        .withArgs(0n, admin.address, 900n);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n); // licenses 1, 2 agree
      await submit(registry, burnerA, 2n, [1n], 1n);
      await submit(registry, burnerC, 2n, [3n], 1n); // licenses 1, 3 agree
      expect(await registry.epochRewardInfo(0n, 1n)).to.deep.equal([900n, 4n, 2n]);

      await expect(registry.connect(alice).claimRewards(0n, [1n]))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_EpochNotEnded")
        .withArgs(0n, 0n);
      await time.increase(EPOCH_DURATION);
      await expect(registry.connect(alice).claimRewards(0n, [1n]))
        .to.emit(registry, "RewardsClaimed")
        .withArgs(0n, 1n, alice.address, 450n);
      expect(await staked.balanceOf(alice.address)).to.equal(450n);
      await registry.connect(bob).claimRewards(0n, [2n]);
      await registry.connect(carol).claimRewards(0n, [3n]);
      expect(await staked.balanceOf(bob.address)).to.equal(225n);
      expect(await staked.balanceOf(carol.address)).to.equal(225n);
      await expect(registry.connect(alice).claimRewards(0n, [1n])).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_NothingToClaim",
      );
      await expect(registry.connect(alice).claimRewards(0n, [2n]))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_NotLicenseOwner")
        .withArgs(2n, alice.address);
    });

    it("counts only agreeing votes in an epoch, and pays a transferred license's reward to its new owner", async function () {
      const { registry, staked, license, admin, alice, outsider, burnerA, burnerB, burnerC } = await withJob();
      await registry.connect(admin).fundEpochRewards(0n, 100n);
      await submit(registry, burnerC, 1n, [3n], 999n); // disagrees
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n);
      expect(await registry.epochRewardInfo(0n, 3n)).to.deep.equal([100n, 2n, 0n]);
      await license.connect(alice).transferFrom(alice.address, outsider.address, 1n);
      await time.increase(EPOCH_DURATION);
      await registry.connect(outsider).claimRewards(0n, [1n]);
      expect(await staked.balanceOf(outsider.address)).to.equal(50n);
    });

    it("keeps a license's votes of an earlier epoch when it earns in a later one, and pays each epoch its own", async function () {
      const { registry, nodeRegistry, staked, admin, consumer, alice, burnerA, burnerB } = await loadFixture(fixture);
      await registry.connect(admin).fundEpochRewards(0n, 600n);
      await registry.connect(admin).fundEpochRewards(1n, 300n);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n); // epoch 0: licenses 1 and 2 agree
      await time.increase(EPOCH_DURATION);
      for (const burner of [burnerA, burnerB]) await nodeRegistry.connect(burner)["heartbeat()"]();
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await submit(registry, burnerA, 2n, [1n], 1n);
      await submit(registry, burnerB, 2n, [2n], 1n); // epoch 1: the same licenses again
      // Epoch 0's vote moved out of license 1's account when it earned in epoch 1; both are readable.
      expect(await registry.epochRewardInfo(0n, 1n)).to.deep.equal([600n, 2n, 1n]);
      expect(await registry.epochRewardInfo(1n, 1n)).to.deep.equal([300n, 2n, 1n]);
      await time.increase(EPOCH_DURATION);
      await registry.connect(alice).claimRewards(0n, [1n]);
      await registry.connect(alice).claimRewards(1n, [1n]);
      expect(await staked.balanceOf(alice.address)).to.equal(300n + 150n);
      for (const epoch of [0n, 1n]) {
        await expect(registry.connect(alice).claimRewards(epoch, [1n])).to.be.revertedWithCustomError(
          registry,
          "VerificationRegistry_NothingToClaim",
        );
      }
    });

    it("rolls an ended epoch's pool without agreeing votes into the current epoch", async function () {
      const { registry, admin, outsider } = await loadFixture(fixture);
      await registry.connect(admin).fundEpochRewards(0n, 500n);
      await expect(registry.rollOverEpochRewards(0n)).to.be.revertedWithCustomError(registry, "VerificationRegistry_EpochNotEnded");
      await time.increase(2n * EPOCH_DURATION);
      await expect(registry.connect(outsider).rollOverEpochRewards(0n)).to.emit(registry, "EpochRewardsRolledOver").withArgs(0n, 2n, 500n);
      expect((await registry.epochRewardInfo(2n, 0n)).pool).to.equal(500n);
      await expect(registry.rollOverEpochRewards(0n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_CannotRollOver")
        .withArgs(0n);
    });

    it("refuses to roll over an epoch that has agreeing votes", async function () {
      const { registry, admin, burnerA, burnerB } = await withJob();
      await registry.connect(admin).fundEpochRewards(0n, 500n);
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n);
      await time.increase(EPOCH_DURATION);
      await expect(registry.rollOverEpochRewards(0n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_CannotRollOver")
        .withArgs(0n);
    });

    it("refuses invalid funding: an ended epoch, zero, or a caller who is not a funder", async function () {
      const { registry, admin, outsider } = await loadFixture(fixture);
      await time.increase(EPOCH_DURATION);
      await expect(registry.connect(admin).fundEpochRewards(0n, 1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_EpochEnded")
        .withArgs(0n, 1n);
      await expect(registry.connect(admin).fundEpochRewards(1n, 0n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAmount",
      );
      await expect(registry.connect(outsider).fundEpochRewards(1n, 1n))
        .to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await registry.REWARDS_FUNDER_ROLE());
    });
  });
});
