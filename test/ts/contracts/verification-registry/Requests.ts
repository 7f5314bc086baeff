import { expect } from "chai";

import { addressToBytes32, E18, JOB_TIMEOUT, QUORUM, REQUEST_FEE } from "../../../helpers/protocol.ts";
import { JobStatus } from "@avn/protocol/constants";
import { ethers, loadFixture, time, fixture, HOLDER, TOKEN, SOL_OWNER, SOL_MINT, submit, withJob } from "./fixture.ts";

describe("VerificationRegistry: requests and expiry", function () {
  describe("requests", function () {
    it("requestEvmBalance reserves the fee and emits the job with padded addresses", async function () {
      const { registry, consumer } = await loadFixture(fixture);
      await expect(registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN))
        .to.emit(registry, "VerificationRequested")
        .withArgs(1n, consumer.address, 0, addressToBytes32(HOLDER), addressToBytes32(TOKEN), REQUEST_FEE);
      const job = await registry.getJob(1n);
      expect(job.requester).to.equal(consumer.address);
      expect(job.status).to.equal(JobStatus.open);
      expect(job.quorum).to.equal(QUORUM);
      expect(job.deadline).to.equal(BigInt(await time.latest()) + JOB_TIMEOUT);
      expect(job.voteCount).to.equal(0n);
      expect(await registry.nextJobId()).to.equal(2n);
    });

    it("requestSvmBalance records chain 1 and the raw 32-byte keys", async function () {
      const { registry, consumer } = await loadFixture(fixture);
      await expect(registry.connect(consumer).requestSvmBalance(SOL_OWNER, SOL_MINT))
        .to.emit(registry, "VerificationRequested")
        .withArgs(1n, consumer.address, 1, SOL_OWNER, SOL_MINT, REQUEST_FEE);
    });

    it("refuses a request when the collateral is below the fee", async function () {
      const { registry, outsider } = await loadFixture(fixture);
      await expect(registry.connect(outsider).requestEvmBalance(HOLDER, TOKEN))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_InsufficientCollateral")
        .withArgs(outsider.address, 0n, REQUEST_FEE);
    });

    it("refuses a zero owner or asset", async function () {
      const { registry, consumer } = await loadFixture(fixture);
      await expect(registry.connect(consumer).requestEvmBalance(ethers.ZeroAddress, TOKEN)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAddress",
      );
      await expect(registry.connect(consumer).requestSvmBalance(SOL_OWNER, ethers.ZeroHash)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_ZeroAddress",
      );
    });
  });

  describe("expiry", function () {
    it("anyone expires an unfinished job after its deadline; the fee returns to the collateral", async function () {
      const { registry, consumer, outsider } = await withJob();
      const job = await registry.getJob(1n);
      await time.increaseTo(job.deadline + 1n);
      await expect(registry.connect(outsider).expireJob(1n)).to.emit(registry, "JobExpired").withArgs(1n, consumer.address, REQUEST_FEE);
      expect(await registry.collateralOf(consumer.address)).to.deep.equal([1_000n * E18, 0n]);
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.expired);
    });

    it("refuses to expire a job before its deadline, one not open, or one finalized", async function () {
      const { registry, outsider } = await withJob();
      const job = await registry.getJob(1n);
      await time.setNextBlockTimestamp(job.deadline);
      await expect(registry.connect(outsider).expireJob(1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_JobNotExpired")
        .withArgs(1n, job.deadline);
      await expect(registry.expireJob(7n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_JobNotOpen")
        .withArgs(7n, JobStatus.none);
      await time.increaseTo(job.deadline + 1n);
      await registry.connect(outsider).expireJob(1n);
      await expect(registry.expireJob(1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_JobNotOpen")
        .withArgs(1n, JobStatus.expired);
    });

    it("refuses to expire a finalized job", async function () {
      const { registry, burnerA, burnerB } = await withJob();
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n);
      await time.increase(JOB_TIMEOUT + 1n);
      await expect(registry.expireJob(1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_JobNotOpen")
        .withArgs(1n, JobStatus.finalized);
    });
  });
});
