import { expect } from "chai";
import { network } from "hardhat";

import { DAY, DEFAULT_SCHEDULE, deployTokens, expectedRate, RATE_ONE, type Schedule } from "../../helpers/tokens.ts";
import { E18 } from "@avn/protocol/units";
import { RedemptionStatus } from "@avn/protocol/constants";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const fixture = () => deployTokens(ethers);

describe("StakedToken", function () {
  /** Without donations, primary held equals the staked supply plus the pending redemptions exactly. */
  async function expectFullyBacked({ primary, staked }: Awaited<ReturnType<typeof fixture>>) {
    const held = await primary.balanceOf(await staked.getAddress());
    expect(held).to.equal((await staked.totalSupply()) + (await staked.totalPendingRedemptions()));
  }

  describe("deployment", function () {
    it("stores its parameters and gives the admin role to the given admin", async function () {
      const { primary, staked, admin, rewardsPool, escrow } = await loadFixture(fixture);
      expect(await staked.name()).to.equal("Staked Verification Network");
      expect(await staked.symbol()).to.equal("sVNT");
      expect(await staked.decimals()).to.equal(18n);
      expect(await staked.PRIMARY_TOKEN()).to.equal(await primary.getAddress());
      expect(await staked.defaultAdmin()).to.equal(admin.address);
      expect(await staked.defaultAdminDelay()).to.equal(3n * DAY);
      expect(await staked.forfeitRecipient()).to.equal(rewardsPool.address);
      expect(await staked.minUnlockPeriod()).to.equal(DEFAULT_SCHEDULE.minPeriod);
      expect(await staked.maxUnlockPeriod()).to.equal(DEFAULT_SCHEDULE.maxPeriod);
      expect(await staked.rateSchedule()).to.deep.equal(Object.values(DEFAULT_SCHEDULE));
      expect(await staked.nextRedemptionId()).to.equal(1n);
      expect(await staked.isProtocol(await escrow.getAddress())).to.equal(true);
      expect(await staked.isProtocol(admin.address)).to.equal(false);
    });

    async function deployWith(overrides: Partial<{ primary: string; admin: string; schedule: Schedule; recipient: string }>) {
      const { primary, admin, rewardsPool } = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("StakedToken");
      const deployment = factory.deploy(
        "S",
        "S",
        overrides.primary ?? (await primary.getAddress()),
        overrides.admin ?? admin.address,
        0n,
        overrides.schedule ?? DEFAULT_SCHEDULE,
        overrides.recipient ?? rewardsPool.address,
      );
      return { factory, deployment };
    }

    it("refuses a zero primary token", async function () {
      const { factory, deployment } = await deployWith({ primary: ethers.ZeroAddress });
      await expect(deployment).to.be.revertedWithCustomError(factory, "StakedToken_ZeroAddress");
    });

    it("refuses a zero admin", async function () {
      const { factory, deployment } = await deployWith({ admin: ethers.ZeroAddress });
      await expect(deployment).to.be.revertedWithCustomError(factory, "AccessControlInvalidDefaultAdmin");
    });

    it("refuses a zero forfeit recipient", async function () {
      const { factory, deployment } = await deployWith({ recipient: ethers.ZeroAddress });
      await expect(deployment).to.be.revertedWithCustomError(factory, "StakedToken_InvalidRecipient").withArgs(ethers.ZeroAddress);
    });

    it("refuses a primary token with other decimals", async function () {
      const { admin, rewardsPool } = await loadFixture(fixture);
      // Deployed after the fixture is loaded: loading it again would roll this deployment back.
      const sixDecimals = await ethers.deployContract("MockERC20Decimals", [6]);
      const factory = await ethers.getContractFactory("StakedToken");
      const deployment = factory.deploy("S", "S", await sixDecimals.getAddress(), admin.address, 0n, DEFAULT_SCHEDULE, rewardsPool.address);
      await expect(deployment).to.be.revertedWithCustomError(factory, "StakedToken_DecimalsMismatch").withArgs(6, 18);
    });

    it("refuses an invalid rate schedule", async function () {
      const { factory, deployment } = await deployWith({ schedule: { ...DEFAULT_SCHEDULE, maxRate: RATE_ONE } });
      await expect(deployment).to.be.revertedWithCustomError(factory, "StakedToken_InvalidRateSchedule");
    });
  });

  describe("stake and stakeFor", function () {
    it("pulls primary tokens and mints the same amount of staked tokens to the caller", async function () {
      const context = await loadFixture(fixture);
      const { primary, staked, alice } = context;
      await expect(staked.connect(alice).stake(100n * E18))
        .to.emit(staked, "Staked")
        .withArgs(alice.address, alice.address, 100n * E18)
        .and.to.emit(staked, "Transfer")
        .withArgs(ethers.ZeroAddress, alice.address, 100n * E18);
      expect(await staked.balanceOf(alice.address)).to.equal(100n * E18);
      expect(await primary.balanceOf(await staked.getAddress())).to.equal(100n * E18);
      await expectFullyBacked(context);
    });

    it("stakeFor mints to the beneficiary and pulls from the payer", async function () {
      const { primary, staked, alice, carol, funding } = await loadFixture(fixture);
      await expect(staked.connect(alice).stakeFor(carol.address, 5n)).to.emit(staked, "Staked").withArgs(alice.address, carol.address, 5n);
      expect(await staked.balanceOf(carol.address)).to.equal(5n);
      expect(await staked.balanceOf(alice.address)).to.equal(0n);
      expect(await primary.balanceOf(alice.address)).to.equal(funding - 5n);
    });

    it("refuses a zero amount", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await expect(staked.connect(alice).stake(0n)).to.be.revertedWithCustomError(staked, "StakedToken_ZeroAmount");
      await expect(staked.connect(alice).stakeFor(alice.address, 0n)).to.be.revertedWithCustomError(staked, "StakedToken_ZeroAmount");
    });

    it("refuses a zero beneficiary", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await expect(staked.connect(alice).stakeFor(ethers.ZeroAddress, 1n)).to.be.revertedWithCustomError(staked, "StakedToken_ZeroAddress");
    });

    it("refuses to stake primary tokens that are not approved", async function () {
      const { primary, staked, carol } = await loadFixture(fixture);
      await expect(staked.connect(carol).stake(1n)).to.be.revertedWithCustomError(primary, "ERC20InsufficientAllowance");
    });
  });

  describe("non-transferability", function () {
    it("refuses a transfer between ordinary accounts", async function () {
      const { staked, alice, bob } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(alice).transfer(bob.address, 1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_TransferNotAllowed")
        .withArgs(alice.address, bob.address);
    });

    it("refuses a transferFrom between ordinary accounts", async function () {
      const { staked, alice, bob } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(bob).transferFrom(alice.address, bob.address, 1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_TransferNotAllowed")
        .withArgs(alice.address, bob.address);
    });

    it("refuses approving an ordinary account", async function () {
      const { staked, alice, bob } = await loadFixture(fixture);
      await expect(staked.connect(alice).approve(bob.address, 1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_ApprovalNotAllowed")
        .withArgs(alice.address, bob.address);
    });

    it("refuses zero and self transfers between ordinary accounts (non-transferable means no transfer at all)", async function () {
      const { staked, alice, bob } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(alice).transfer(bob.address, 0n)).to.be.revertedWithCustomError(staked, "StakedToken_TransferNotAllowed");
      await expect(staked.connect(alice).transfer(alice.address, 1n)).to.be.revertedWithCustomError(
        staked,
        "StakedToken_TransferNotAllowed",
      );
    });

    it("an allowance to a contract that lost its protocol role can still be revoked", async function () {
      const { staked, escrow, admin, alice } = await loadFixture(fixture);
      const escrowAddress = await escrow.getAddress();
      await staked.connect(alice).approve(escrowAddress, ethers.MaxUint256);
      await staked.connect(admin).revokeRole(await staked.PROTOCOL_ROLE(), escrowAddress);
      await expect(staked.connect(alice).approve(escrowAddress, 1n)).to.be.revertedWithCustomError(
        staked,
        "StakedToken_ApprovalNotAllowed",
      );
      await expect(staked.connect(alice).approve(escrowAddress, 0n)).to.emit(staked, "Approval").withArgs(alice.address, escrowAddress, 0n);
      expect(await staked.allowance(alice.address, escrowAddress)).to.equal(0n);
    });

    it("an ordinary account may transfer straight into a protocol contract", async function () {
      const { staked, escrow, alice } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await staked.connect(alice).transfer(await escrow.getAddress(), 10n);
      expect(await staked.balanceOf(await escrow.getAddress())).to.equal(10n);
    });

    it("refuses a protocol spender moving tokens between ordinary accounts", async function () {
      // Even an allowlisted spender cannot route tokens from one ordinary account to another.
      const { staked, escrow, alice, bob } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await staked.connect(alice).approve(await escrow.getAddress(), 10n);
      const escrowAddress = await escrow.getAddress();
      await networkHelpers.impersonateAccount(escrowAddress);
      await networkHelpers.setBalance(escrowAddress, E18);
      const escrowSigner = await ethers.getSigner(escrowAddress);
      await expect(staked.connect(escrowSigner).transferFrom(alice.address, bob.address, 1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_TransferNotAllowed")
        .withArgs(alice.address, bob.address);
    });

    it("lets a protocol contract receive staked tokens and return them", async function () {
      const context = await loadFixture(fixture);
      const { staked, escrow, alice, bob } = context;
      const escrowAddress = await escrow.getAddress();
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(alice).approve(escrowAddress, 10n))
        .to.emit(staked, "Approval")
        .withArgs(alice.address, escrowAddress, 10n);

      await expect(escrow.connect(alice).deposit(10n)).to.emit(staked, "Transfer").withArgs(alice.address, escrowAddress, 10n);
      expect(await staked.balanceOf(escrowAddress)).to.equal(10n);

      await escrow.withdraw(bob.address, 4n);
      expect(await staked.balanceOf(bob.address)).to.equal(4n);
      expect(await staked.balanceOf(escrowAddress)).to.equal(6n);
      await expectFullyBacked(context);
    });

    it("stops a contract's transfers once its protocol role is revoked", async function () {
      const { staked, escrow, admin, alice } = await loadFixture(fixture);
      const escrowAddress = await escrow.getAddress();
      await staked.connect(alice).stake(10n);
      await staked.connect(alice).approve(escrowAddress, 10n);
      await escrow.connect(alice).deposit(10n);
      await staked.connect(admin).revokeRole(await staked.PROTOCOL_ROLE(), escrowAddress);

      await expect(escrow.withdraw(alice.address, 1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_TransferNotAllowed")
        .withArgs(escrowAddress, alice.address);
    });

    it("refuses granting the protocol role to an account without code", async function () {
      const { staked, admin, bob } = await loadFixture(fixture);
      await expect(staked.connect(admin).grantRole(await staked.PROTOCOL_ROLE(), bob.address))
        .to.be.revertedWithCustomError(staked, "StakedToken_ProtocolNotContract")
        .withArgs(bob.address);
    });

    it("refuses granting the protocol role to an EIP-7702 delegated account", async function () {
      const { staked, escrow, admin, carol } = await loadFixture(fixture);
      await networkHelpers.setCode(carol.address, `0xef0100${(await escrow.getAddress()).slice(2)}`);
      await expect(staked.connect(admin).grantRole(await staked.PROTOCOL_ROLE(), carol.address))
        .to.be.revertedWithCustomError(staked, "StakedToken_ProtocolNotContract")
        .withArgs(carol.address);
    });

    it("grants the protocol role with an event, and the admin role only through the two-step transfer", async function () {
      const { staked, primary, admin, carol } = await loadFixture(fixture);
      const role = await staked.PROTOCOL_ROLE();
      await expect(staked.connect(admin).grantRole(role, await primary.getAddress()))
        .to.emit(staked, "RoleGranted")
        .withArgs(role, await primary.getAddress(), admin.address);
      await expect(staked.connect(admin).grantRole(ethers.ZeroHash, carol.address)).to.be.revertedWithCustomError(
        staked,
        "AccessControlEnforcedDefaultAdminRules",
      );
      await staked.connect(admin).beginDefaultAdminTransfer(carol.address);
      await expect(staked.connect(carol).acceptDefaultAdminTransfer()).to.be.revertedWithCustomError(
        staked,
        "AccessControlEnforcedDefaultAdminDelay",
      );
      await time.increase(3n * DAY + 1n);
      await staked.connect(carol).acceptDefaultAdminTransfer();
      expect(await staked.defaultAdmin()).to.equal(carol.address);
      await expect(staked.connect(admin).setForfeitRecipient(admin.address)).to.be.revertedWithCustomError(
        staked,
        "AccessControlUnauthorizedAccount",
      );
      await staked.connect(carol).setForfeitRecipient(carol.address);
    });

    it("refuses the protocol role granted by a non-admin", async function () {
      const { staked, primary, alice } = await loadFixture(fixture);
      const role = await staked.PROTOCOL_ROLE();
      await expect(staked.connect(alice).grantRole(role, await primary.getAddress()))
        .to.be.revertedWithCustomError(staked, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ethers.ZeroHash);
    });
  });

  describe("burnForService", function () {
    async function escrowHolding(amount: bigint) {
      const context = await loadFixture(fixture);
      const { staked, escrow, alice } = context;
      await staked.connect(alice).stake(amount);
      await staked.connect(alice).approve(await escrow.getAddress(), amount);
      await escrow.connect(alice).deposit(amount);
      return context;
    }

    it("burns the protocol's staked tokens and releases their backing to the named recipient", async function () {
      const context = await escrowHolding(100n);
      const { primary, staked, escrow, carol } = context;
      const escrowAddress = await escrow.getAddress();
      await expect(escrow.burnForService(30n, carol.address))
        .to.emit(staked, "BurnedForService")
        .withArgs(escrowAddress, carol.address, 30n)
        .and.to.emit(staked, "Transfer")
        .withArgs(escrowAddress, ethers.ZeroAddress, 30n);
      expect(await primary.balanceOf(carol.address)).to.equal(30n);
      expect(await staked.balanceOf(escrowAddress)).to.equal(70n);
      expect(await staked.totalSupply()).to.equal(70n);
      await expectFullyBacked(context);
    });

    it("refuses a caller without the protocol role", async function () {
      const { staked, alice } = await escrowHolding(100n);
      await expect(staked.connect(alice).burnForService(1n, alice.address))
        .to.be.revertedWithCustomError(staked, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, await staked.PROTOCOL_ROLE());
    });

    it("refuses burning zero", async function () {
      const { staked, escrow, carol } = await escrowHolding(100n);
      await expect(escrow.burnForService(0n, carol.address)).to.be.revertedWithCustomError(staked, "StakedToken_ZeroAmount");
    });

    it("refuses a burn whose recipient is zero or the staked token", async function () {
      const { staked, escrow } = await escrowHolding(100n);
      for (const recipient of [ethers.ZeroAddress, await staked.getAddress()]) {
        await expect(escrow.burnForService(1n, recipient))
          .to.be.revertedWithCustomError(staked, "StakedToken_InvalidRecipient")
          .withArgs(recipient);
      }
    });

    it("refuses a burn after the protocol role is revoked", async function () {
      const { staked, escrow, admin, carol } = await escrowHolding(100n);
      await staked.connect(admin).revokeRole(await staked.PROTOCOL_ROLE(), await escrow.getAddress());
      await expect(escrow.burnForService(1n, carol.address)).to.be.revertedWithCustomError(staked, "AccessControlUnauthorizedAccount");
    });

    it("refuses a burn beyond the protocol's balance", async function () {
      const { staked, escrow, carol } = await escrowHolding(100n);
      await expect(escrow.burnForService(101n, carol.address)).to.be.revertedWithCustomError(staked, "ERC20InsufficientBalance");
    });
  });

  describe("rate schedule and previewRedemption", function () {
    it("pays 25% at 15 days, 95% at 180 days and the linear value between", async function () {
      const { staked } = await loadFixture(fixture);
      expect(await staked.redemptionRate(15n * DAY)).to.equal(RATE_ONE / 4n);
      expect(await staked.redemptionRate(180n * DAY)).to.equal((95n * RATE_ONE) / 100n);
      expect(await staked.redemptionRate(97n * DAY + 12n * 3600n)).to.equal((60n * RATE_ONE) / 100n);
      for (const period of [15n * DAY + 1n, 33n * DAY + 7n, 179n * DAY]) {
        expect(await staked.redemptionRate(period)).to.equal(expectedRate(DEFAULT_SCHEDULE, period));
      }
      expect(await staked.previewRedemption(1000n * E18, 15n * DAY)).to.equal(250n * E18);
      expect(await staked.previewRedemption(1000n * E18, 180n * DAY)).to.equal(950n * E18);
    });

    it("rounds the payout down", async function () {
      const { staked } = await loadFixture(fixture);
      // 3 units at 25% = 0.75 unit: paid as 0. 7 units at 25% = 1.75: paid as 1.
      expect(await staked.previewRedemption(3n, 15n * DAY)).to.equal(0n);
      expect(await staked.previewRedemption(7n, 15n * DAY)).to.equal(1n);
    });

    it("refuses a period below the minimum or above the maximum", async function () {
      const { staked } = await loadFixture(fixture);
      for (const period of [15n * DAY - 1n, 180n * DAY + 1n, 0n]) {
        await expect(staked.previewRedemption(1n, period))
          .to.be.revertedWithCustomError(staked, "StakedToken_UnlockPeriodOutOfRange")
          .withArgs(period, DEFAULT_SCHEDULE.minPeriod, DEFAULT_SCHEDULE.maxPeriod);
      }
    });
  });

  describe("requestRedemption", function () {
    it("burns the staked amount at once and records the request with a fixed payout", async function () {
      const context = await loadFixture(fixture);
      const { staked, alice } = context;
      await staked.connect(alice).stake(1000n * E18);
      const period = 30n * DAY;
      const payout = (1000n * E18 * expectedRate(DEFAULT_SCHEDULE, period)) / RATE_ONE;

      const tx = staked.connect(alice).requestRedemption(400n * E18, period);
      const unlockTime = BigInt(await time.latest()) + 1n + period;
      await expect(tx)
        .to.emit(staked, "RedemptionRequested")
        .withArgs(1n, alice.address, 400n * E18, (payout * 400n) / 1000n, period, unlockTime)
        .and.to.emit(staked, "Transfer")
        .withArgs(alice.address, ethers.ZeroAddress, 400n * E18);

      expect(await staked.balanceOf(alice.address)).to.equal(600n * E18);
      expect(await staked.totalSupply()).to.equal(600n * E18);
      expect(await staked.totalPendingRedemptions()).to.equal(400n * E18);
      expect(await staked.nextRedemptionId()).to.equal(2n);
      expect(await staked.getRedemption(1n)).to.deep.equal([
        400n * E18,
        (payout * 400n) / 1000n,
        alice.address,
        unlockTime,
        BigInt(RedemptionStatus.Pending),
      ]);
      expect(await staked.pendingRedemptionIds(alice.address, 0n, 10n)).to.deep.equal([1n]);
      await expectFullyBacked(context);
    });

    it("refuses redeeming zero", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await expect(staked.connect(alice).requestRedemption(0n, 15n * DAY)).to.be.revertedWithCustomError(staked, "StakedToken_ZeroAmount");
    });

    it("refuses an unlock period out of range", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(alice).requestRedemption(10n, 14n * DAY))
        .to.be.revertedWithCustomError(staked, "StakedToken_UnlockPeriodOutOfRange")
        .withArgs(14n * DAY, DEFAULT_SCHEDULE.minPeriod, DEFAULT_SCHEDULE.maxPeriod);
    });

    it("refuses a redemption whose payout would be zero", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(alice).requestRedemption(3n, 15n * DAY))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionTooSmall")
        .withArgs(3n, 15n * DAY);
    });

    it("refuses an amount beyond the balance", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await staked.connect(alice).stake(10n);
      await expect(staked.connect(alice).requestRedemption(11n, 15n * DAY)).to.be.revertedWithCustomError(
        staked,
        "ERC20InsufficientBalance",
      );
    });
  });

  describe("cancelRedemption", function () {
    async function pendingRequest() {
      const context = await loadFixture(fixture);
      const { staked, alice } = context;
      await staked.connect(alice).stake(100n);
      await staked.connect(alice).requestRedemption(60n, 20n * DAY);
      return context;
    }

    it("returns the full staked amount, also after the unlock time", async function () {
      const context = await pendingRequest();
      const { staked, alice } = context;
      await time.increase(40n * DAY);
      await expect(staked.connect(alice).cancelRedemption(1n))
        .to.emit(staked, "RedemptionCancelled")
        .withArgs(1n, alice.address, 60n)
        .and.to.emit(staked, "Transfer")
        .withArgs(ethers.ZeroAddress, alice.address, 60n);
      expect(await staked.balanceOf(alice.address)).to.equal(100n);
      expect(await staked.totalPendingRedemptions()).to.equal(0n);
      expect((await staked.getRedemption(1n)).status).to.equal(BigInt(RedemptionStatus.Cancelled));
      expect(await staked.pendingRedemptionCount(alice.address)).to.equal(0n);
      await expectFullyBacked(context);
    });

    it("refuses a caller who is not the requester", async function () {
      const { staked, bob } = await pendingRequest();
      await expect(staked.connect(bob).cancelRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_NotRequester")
        .withArgs(1n, bob.address);
    });

    it("refuses a redemption already cancelled", async function () {
      const { staked, alice } = await pendingRequest();
      await staked.connect(alice).cancelRedemption(1n);
      await expect(staked.connect(alice).cancelRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionNotPending")
        .withArgs(1n, RedemptionStatus.Cancelled);
    });

    it("refuses a redemption already completed", async function () {
      const { staked, alice } = await pendingRequest();
      await time.increase(20n * DAY);
      await staked.connect(alice).completeRedemption(1n);
      await expect(staked.connect(alice).cancelRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionNotPending")
        .withArgs(1n, RedemptionStatus.Completed);
    });

    it("refuses an id never issued", async function () {
      const { staked, alice } = await pendingRequest();
      await expect(staked.connect(alice).cancelRedemption(2n))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionNotPending")
        .withArgs(2n, RedemptionStatus.None);
    });
  });

  describe("completeRedemption", function () {
    async function pendingRequest() {
      const context = await loadFixture(fixture);
      const { staked, alice } = context;
      await staked.connect(alice).stake(1000n * E18);
      await staked.connect(alice).requestRedemption(1000n * E18, 15n * DAY);
      return context;
    }

    it("pays the fixed amount to the requester and the forfeited backing to the recipient", async function () {
      const context = await pendingRequest();
      const { primary, staked, alice, rewardsPool, funding } = context;
      await time.increase(15n * DAY);
      await expect(staked.connect(alice).completeRedemption(1n))
        .to.emit(staked, "RedemptionCompleted")
        .withArgs(1n, alice.address, 250n * E18, 750n * E18, rewardsPool.address);
      expect(await primary.balanceOf(alice.address)).to.equal(funding - 750n * E18);
      expect(await primary.balanceOf(rewardsPool.address)).to.equal(750n * E18);
      expect(await primary.balanceOf(await staked.getAddress())).to.equal(0n);
      expect(await staked.totalPendingRedemptions()).to.equal(0n);
      expect(await staked.totalSupply()).to.equal(0n);
      expect((await staked.getRedemption(1n)).status).to.equal(BigInt(RedemptionStatus.Completed));
      await expectFullyBacked(context);
    });

    it("completes exactly at the unlock time", async function () {
      const { staked, alice } = await pendingRequest();
      const { unlockTime } = await staked.getRedemption(1n);
      await time.setNextBlockTimestamp(unlockTime);
      await expect(staked.connect(alice).completeRedemption(1n)).to.emit(staked, "RedemptionCompleted");
    });

    it("refuses while still locked (one second before the unlock time)", async function () {
      const { staked, alice } = await pendingRequest();
      const { unlockTime } = await staked.getRedemption(1n);
      await time.setNextBlockTimestamp(unlockTime - 1n);
      await expect(staked.connect(alice).completeRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionLocked")
        .withArgs(1n, unlockTime);
    });

    it("refuses a redemption already completed", async function () {
      const { staked, alice } = await pendingRequest();
      await time.increase(15n * DAY);
      await staked.connect(alice).completeRedemption(1n);
      await expect(staked.connect(alice).completeRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionNotPending")
        .withArgs(1n, RedemptionStatus.Completed);
    });

    it("refuses a cancelled redemption", async function () {
      const { staked, alice } = await pendingRequest();
      await staked.connect(alice).cancelRedemption(1n);
      await time.increase(15n * DAY);
      await expect(staked.connect(alice).completeRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_RedemptionNotPending")
        .withArgs(1n, RedemptionStatus.Cancelled);
    });

    it("refuses a caller who is not the requester", async function () {
      const { staked, bob } = await pendingRequest();
      await time.increase(15n * DAY);
      await expect(staked.connect(bob).completeRedemption(1n))
        .to.be.revertedWithCustomError(staked, "StakedToken_NotRequester")
        .withArgs(1n, bob.address);
    });

    it("keeps the terms of requests made before a schedule change", async function () {
      const { primary, staked, admin, alice, funding } = await pendingRequest();
      const generous = { minPeriod: 1n * DAY, maxPeriod: 10n * DAY, minRate: RATE_ONE / 2n, maxRate: (99n * RATE_ONE) / 100n };
      await staked.connect(admin).setRateSchedule(generous);
      // The request's 15-day period is not even allowed any more, yet the request completes on its terms.
      await expect(staked.previewRedemption(1000n * E18, 15n * DAY)).to.be.revertedWithCustomError(
        staked,
        "StakedToken_UnlockPeriodOutOfRange",
      );
      await time.increase(15n * DAY);
      await staked.connect(alice).completeRedemption(1n);
      expect(await primary.balanceOf(alice.address)).to.equal(funding - 750n * E18);
    });
  });

  describe("pendingRedemptionIds (paged)", function () {
    async function fiveRequests() {
      const context = await loadFixture(fixture);
      const { staked, alice } = context;
      await staked.connect(alice).stake(500n);
      for (let i = 0; i < 5; i++) await staked.connect(alice).requestRedemption(100n, 15n * DAY);
      return context;
    }

    it("pages through a holder's pending ids", async function () {
      const { staked, alice, bob } = await fiveRequests();
      expect(await staked.pendingRedemptionCount(alice.address)).to.equal(5n);
      expect(await staked.pendingRedemptionIds(alice.address, 0n, 2n)).to.deep.equal([1n, 2n]);
      expect(await staked.pendingRedemptionIds(alice.address, 2n, 2n)).to.deep.equal([3n, 4n]);
      expect(await staked.pendingRedemptionIds(alice.address, 4n, 2n)).to.deep.equal([5n]);
      expect(await staked.pendingRedemptionIds(alice.address, 5n, 2n)).to.deep.equal([]);
      expect(await staked.pendingRedemptionIds(alice.address, 0n, ethers.MaxUint256)).to.have.length(5);
      expect(await staked.pendingRedemptionIds(alice.address, ethers.MaxUint256, ethers.MaxUint256)).to.deep.equal([]);
      expect(await staked.pendingRedemptionIds(bob.address, 0n, 10n)).to.deep.equal([]);
    });

    it("drops ids that leave the pending set", async function () {
      const { staked, alice } = await fiveRequests();
      await staked.connect(alice).cancelRedemption(2n);
      await time.increase(15n * DAY);
      await staked.connect(alice).completeRedemption(4n);
      const ids = await staked.pendingRedemptionIds(alice.address, 0n, 10n);
      expect([...ids].sort()).to.deep.equal([1n, 3n, 5n]);
    });
  });

  describe("governance setters", function () {
    it("setRateSchedule applies to new requests and emits the old and new schedule", async function () {
      const { staked, admin } = await loadFixture(fixture);
      const next = { minPeriod: 7n * DAY, maxPeriod: 365n * DAY, minRate: RATE_ONE / 10n, maxRate: (90n * RATE_ONE) / 100n };
      await expect(staked.connect(admin).setRateSchedule(next))
        .to.emit(staked, "RateScheduleUpdated")
        .withArgs(Object.values(DEFAULT_SCHEDULE), Object.values(next));
      expect(await staked.minUnlockPeriod()).to.equal(7n * DAY);
      expect(await staked.maxUnlockPeriod()).to.equal(365n * DAY);
      expect(await staked.redemptionRate(7n * DAY)).to.equal(RATE_ONE / 10n);
    });

    const invalidSchedules: Array<[string, Schedule]> = [
      ["min period not below max period", { ...DEFAULT_SCHEDULE, minPeriod: DEFAULT_SCHEDULE.maxPeriod }],
      ["max period above the cap", { ...DEFAULT_SCHEDULE, maxPeriod: 4n * 365n * DAY + 1n }],
      ["max rate at 100%", { ...DEFAULT_SCHEDULE, maxRate: RATE_ONE }],
      ["min rate not below max rate", { ...DEFAULT_SCHEDULE, minRate: DEFAULT_SCHEDULE.maxRate }],
      ["min rate above max rate", { ...DEFAULT_SCHEDULE, minRate: DEFAULT_SCHEDULE.maxRate + 1n }],
      ["min rate zero (the shortest period would pay nothing)", { ...DEFAULT_SCHEDULE, minRate: 0n }],
      ["rate rising by less than one unit per second", { minPeriod: 0n, maxPeriod: 1000n, minRate: 500n, maxRate: 1499n }],
    ];
    for (const [reason, schedule] of invalidSchedules) {
      it(`test_RevertWhen_ScheduleInvalid: ${reason}`, async function () {
        const { staked, admin } = await loadFixture(fixture);
        await expect(staked.connect(admin).setRateSchedule(schedule))
          .to.be.revertedWithCustomError(staked, "StakedToken_InvalidRateSchedule")
          .withArgs(Object.values(schedule));
      });
    }

    it("accepts a max period exactly at the cap", async function () {
      const { staked, admin } = await loadFixture(fixture);
      const cap = await staked.MAX_UNLOCK_PERIOD_CAP();
      await staked.connect(admin).setRateSchedule({ ...DEFAULT_SCHEDULE, maxPeriod: cap });
      expect(await staked.maxUnlockPeriod()).to.equal(cap);
    });

    it("accepts the steepest edge of the slope rule (one unit per second)", async function () {
      const { staked, admin } = await loadFixture(fixture);
      await staked.connect(admin).setRateSchedule({ minPeriod: 0n, maxPeriod: 1000n, minRate: 500n, maxRate: 1500n });
      expect(await staked.redemptionRate(0n)).to.equal(500n);
      expect(await staked.redemptionRate(1n)).to.equal(501n);
    });

    it("setForfeitRecipient emits the old and new recipient", async function () {
      const { staked, admin, rewardsPool, carol } = await loadFixture(fixture);
      await expect(staked.connect(admin).setForfeitRecipient(carol.address))
        .to.emit(staked, "ForfeitRecipientUpdated")
        .withArgs(rewardsPool.address, carol.address);
      expect(await staked.forfeitRecipient()).to.equal(carol.address);
    });

    it("refuses a forfeit recipient that is zero or the staked token", async function () {
      const { staked, admin } = await loadFixture(fixture);
      for (const recipient of [ethers.ZeroAddress, await staked.getAddress()]) {
        await expect(staked.connect(admin).setForfeitRecipient(recipient))
          .to.be.revertedWithCustomError(staked, "StakedToken_InvalidRecipient")
          .withArgs(recipient);
      }
    });

    it("refuses setter calls by a non-admin", async function () {
      const { staked, alice } = await loadFixture(fixture);
      await expect(staked.connect(alice).setRateSchedule(DEFAULT_SCHEDULE))
        .to.be.revertedWithCustomError(staked, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ethers.ZeroHash);
      await expect(staked.connect(alice).setForfeitRecipient(alice.address))
        .to.be.revertedWithCustomError(staked, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ethers.ZeroHash);
    });
  });
});
