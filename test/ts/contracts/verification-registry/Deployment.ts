import { expect } from "chai";

import { EPOCH_DURATION, JOB_TIMEOUT, QUORUM, REQUEST_FEE } from "../../../helpers/protocol.ts";
import { DEFAULT_RATE_SCHEDULE } from "../../../../src/deploy/contracts.ts";
import { ethers, loadFixture, time, fixture, HOLDER, TOKEN, withJob } from "./fixture.ts";

describe("VerificationRegistry: deployment and governance setters", function () {
  describe("deployment", function () {
    it("stores its wiring and parameters", async function () {
      const { registry, staked, primary, nodeRegistry } = await loadFixture(fixture);
      expect(await registry.STAKED_TOKEN()).to.equal(await staked.getAddress());
      expect(await registry.PRIMARY_TOKEN()).to.equal(await primary.getAddress());
      expect(await registry.NODE_REGISTRY()).to.equal(await nodeRegistry.getAddress());
      expect(await registry.EPOCH_DURATION()).to.equal(EPOCH_DURATION);
      expect(await registry.requestFee()).to.equal(REQUEST_FEE);
      expect(await registry.jobTimeout()).to.equal(JOB_TIMEOUT);
      expect(await registry.currentEpoch()).to.equal(0n);
    });

    it("refuses invalid constructor arguments", async function () {
      const { staked, nodeRegistry, admin } = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("VerificationRegistry");
      const s = await staked.getAddress();
      const n = await nodeRegistry.getAddress();
      const a = admin.address;
      await expect(factory.deploy(ethers.ZeroAddress, n, 1n, 0n, 60n, a, 0n)).to.be.revertedWithCustomError(
        factory,
        "VerificationRegistry_ZeroAddress",
      );
      await expect(factory.deploy(s, ethers.ZeroAddress, 1n, 0n, 60n, a, 0n)).to.be.revertedWithCustomError(
        factory,
        "VerificationRegistry_ZeroAddress",
      );
      await expect(factory.deploy(s, n, 0n, 0n, 60n, a, 0n)).to.be.revertedWithCustomError(
        factory,
        "VerificationRegistry_InvalidEpochDuration",
      );
      await expect(factory.deploy(s, n, 1n, 2n ** 96n, 60n, a, 0n)).to.be.revertedWithCustomError(
        factory,
        "VerificationRegistry_InvalidFee",
      );
      await expect(factory.deploy(s, n, 1n, 0n, 59n, a, 0n)).to.be.revertedWithCustomError(
        factory,
        "VerificationRegistry_InvalidJobTimeout",
      );
    });

    it("refuses a staked token whose primary supply does not fit the packed fee credits and collateral", async function () {
      const { nodeRegistry, admin } = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("VerificationRegistry");
      const deployOver = async (supply: bigint) => {
        const primary = await ethers.deployContract("PlainERC20", [admin.address, supply]);
        const args = [await primary.getAddress(), admin.address, 0n, DEFAULT_RATE_SCHEDULE, admin.address] as const;
        const wide = await ethers.deployContract("StakedToken", ["Wide", "W", ...args]);
        return factory.deploy(await wide.getAddress(), await nodeRegistry.getAddress(), 1n, 0n, 60n, admin.address, 0n);
      };
      await expect(deployOver(2n ** 96n)).to.be.revertedWithCustomError(factory, "VerificationRegistry_SupplyTooLarge");
      await (await deployOver(2n ** 96n - 1n)).waitForDeployment();
    });
  });

  describe("governance setters", function () {
    it("emit old and new values and apply to new jobs only (the quorum, set on the node registry, too)", async function () {
      const { registry, nodeRegistry, admin, consumer } = await withJob();
      await expect(registry.connect(admin).setRequestFee(1n)).to.emit(registry, "RequestFeeUpdated").withArgs(REQUEST_FEE, 1n);
      await nodeRegistry.connect(admin).setQuorum(3n);
      await expect(registry.connect(admin).setJobTimeout(120n)).to.emit(registry, "JobTimeoutUpdated").withArgs(JOB_TIMEOUT, 120n);
      const first = await registry.getJob(1n);
      expect([first.fee, first.quorum]).to.deep.equal([REQUEST_FEE, QUORUM]);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      const second = await registry.getJob(2n);
      expect([second.fee, second.quorum, second.deadline]).to.deep.equal([1n, 3n, BigInt(await time.latest()) + 120n]);
    });

    it("refuses invalid setter input and callers who are not the admin", async function () {
      const { registry, admin, outsider } = await loadFixture(fixture);
      await expect(registry.connect(admin).setJobTimeout(7n * 86_400n + 1n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_InvalidJobTimeout",
      );
      await expect(registry.connect(admin).setRequestFee(2n ** 96n)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_InvalidFee",
      );
      for (const call of [registry.connect(outsider).setJobTimeout(60n), registry.connect(outsider).setRequestFee(0n)]) {
        await expect(call).to.be.revertedWithCustomError(registry, "AccessControlUnauthorizedAccount");
      }
    });
  });
});
