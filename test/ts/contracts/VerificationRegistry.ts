import { expect } from "chai";
import hre, { network } from "hardhat";

import {
  addressToBytes32,
  balanceWord,
  deployProtocol,
  E18,
  EPOCH_DURATION,
  JOB_TIMEOUT,
  LIVENESS_WINDOW,
  QUORUM,
  REQUEST_FEE,
  resultHash,
  type Protocol,
} from "../../helpers/protocol.ts";
import { queryResultHash } from "../../../src/common/query-result.ts";
import { DEFAULT_RATE_SCHEDULE } from "../../../src/deploy/contracts.ts";
import { finalizationGasOf } from "../../../src/node/job-runner.ts";
import { IgnoreReason, JobStatus, MAX_VOTES_PER_JOB } from "@avn/protocol/constants";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;
const fixture = () => deployProtocol(ethers);

/** The modes of MockVerificationConsumer, in its enum's order. */
enum ConsumerMode {
  Record,
  Revert,
  BurnGas,
  Reenter,
}

type Signer = Protocol["alice"];

const HOLDER = "0x1111111111111111111111111111111111111111";
const TOKEN = "0x2222222222222222222222222222222222222222";
const SOL_OWNER = ethers.id("solana owner");
const SOL_MINT = ethers.id("solana mint");

/** What a job asks about, as votes name it. */
interface Subject {
  owner: string;
  asset: string;
}
const EVM_SUBJECT: Subject = { owner: addressToBytes32(HOLDER), asset: addressToBytes32(TOKEN) };
const SOL_SUBJECT: Subject = { owner: SOL_OWNER, asset: SOL_MINT };

/** A vote on the job about `subject` (the EVM holding by default) with `balance` and its QueryResult word. */
function submission(
  jobId: bigint,
  licenseIds: bigint[],
  balance: bigint,
  sourceBlock = 100n,
  queryResult = balanceWord(balance),
  subject = EVM_SUBJECT,
) {
  return { jobId, licenseIds, ...subject, balance, queryResultHash: queryResultHash(queryResult), sourceBlock };
}

/** One submission of `balance` (with its matching QueryResult word) for `licenseIds` by `operator`. */
function submit(
  registry: Protocol["registry"],
  operator: Signer,
  jobId: bigint,
  licenseIds: bigint[],
  balance: bigint,
  sourceBlock = 100n,
  queryResult = balanceWord(balance),
  subject = EVM_SUBJECT,
) {
  return registry.connect(operator).submitResults([submission(jobId, licenseIds, balance, sourceBlock, queryResult, subject)]);
}

/** The fixture plus one open EVM job (id 1) requested by the consumer. */
async function withJob() {
  const context = await loadFixture(fixture);
  await context.registry.connect(context.consumer).requestEvmBalance(HOLDER, TOKEN);
  return context;
}

describe("VerificationRegistry", function () {
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

  describe("submissions and quorum", function () {
    it("a single vote below quorum is recorded, counted and leaves the job open", async function () {
      const { registry, nodeRegistry, burnerA } = await withJob();
      const hash = resultHash(ethers, 0, EVM_SUBJECT, 183n, balanceWord(183n));
      await expect(submit(registry, burnerA, 1n, [1n], 183n, 77n))
        .to.emit(registry, "VoteSubmitted")
        .withArgs(1n, 1n, burnerA.address, hash, 77n);
      expect((await registry.getJob(1n)).voteCount).to.equal(1n);
      expect(await registry.hasVoted(1n, 1n)).to.equal(true);
      expect(await registry.hasVoted(1n, 2n)).to.equal(false);
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.open);
      expect(await nodeRegistry.submissionsOf(1n)).to.equal(1n);
    });

    it("finalizes at quorum: stores the balance and the query result hash, credits the fee to the agreeing licenses", async function () {
      const { registry, staked, nodeRegistry, consumer, burnerA, burnerB } = await withJob();
      const registryStaked = await staked.balanceOf(await registry.getAddress());
      await submit(registry, burnerA, 1n, [1n], 183n, 90n);
      const tx = submit(registry, burnerB, 1n, [2n], 183n, 95n);
      await expect(tx)
        .to.emit(registry, "VerificationFulfilled")
        .withArgs(1n, 0, addressToBytes32(HOLDER), addressToBytes32(TOKEN), 183n, queryResultHash(balanceWord(183n)), 95n)
        .and.not.to.emit(staked, "BurnedForService");

      const finalizedAt = BigInt(await time.latest());
      expect(await registry.getResult(1n)).to.deep.equal([JobStatus.finalized, 183n, queryResultHash(balanceWord(183n)), 95n, finalizedAt]);
      expect(await registry.latestBalance(0, addressToBytes32(HOLDER), addressToBytes32(TOKEN))).to.deep.equal([
        183n,
        95n,
        finalizedAt,
        1n,
      ]);
      // The fee's staked tokens stay here, credited to the licenses, until their owners claim.
      expect(await staked.balanceOf(await registry.getAddress())).to.equal(registryStaked);
      expect(await registry.totalFeesBurned()).to.equal(0n);
      expect(await registry.collateralOf(consumer.address)).to.deep.equal([1_000n * E18 - REQUEST_FEE, 0n]);
      expect(await registry.claimableFees(1n)).to.equal(REQUEST_FEE / 2n);
      expect(await registry.claimableFees(2n)).to.equal(REQUEST_FEE / 2n);
      expect(await nodeRegistry.submissionsOf(2n)).to.equal(1n);
      expect(await registry.voteStatsOf(2n)).to.deep.equal([1n, 0n]);
      expect(await registry.epochRewardInfo(0n, 1n)).to.deep.equal([0n, 2n, 1n]);
      // A finalized job keeps its result, not what only an open job needed.
      const job = await registry.getJob(1n);
      expect([job.status, job.fee, job.voteCount, job.deadline]).to.deep.equal([JobStatus.finalized, 0n, 0n, 0n]);
      await expect(registry.hasVoted(1n, 1n)).to.be.revertedWithCustomError(registry, "VerificationRegistry_JobNotOpen");
    });

    it("a disagreeing first vote does not block a later quorum, and is recorded as disagreeing", async function () {
      const { registry, nodeRegistry, burnerA, burnerB, burnerC } = await withJob();
      await submit(registry, burnerA, 1n, [1n], 999n);
      await submit(registry, burnerB, 1n, [2n], 183n);
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.open);
      await expect(submit(registry, burnerC, 1n, [3n], 183n)).to.emit(registry, "VerificationFulfilled");
      expect((await registry.getResult(1n)).balance).to.equal(183n);
      expect(await registry.voteStatsOf(1n)).to.deep.equal([0n, 1n]);
      expect(await registry.voteStatsOf(3n)).to.deep.equal([1n, 0n]);
      expect(await nodeRegistry.submissionsOf(1n)).to.equal(1n);
      expect(await registry.claimableFees(1n)).to.equal(0n);
    });

    it("the same balance with a different query result is a different answer", async function () {
      const { registry, burnerA, burnerB } = await withJob();
      await submit(registry, burnerA, 1n, [1n], 183n, 100n, balanceWord(183n));
      await submit(registry, burnerB, 1n, [2n], 183n, 100n, "0x");
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.open);
    });

    it("refuses every vote about another owner or asset, first or later, so no quorum forms on another subject", async function () {
      const { registry, burnerA, burnerB, burnerC } = await withJob();
      const other = { owner: addressToBytes32(TOKEN), asset: addressToBytes32(HOLDER) };
      const otherAsset = { owner: addressToBytes32(HOLDER), asset: addressToBytes32(HOLDER) };
      await expect(submit(registry, burnerA, 1n, [1n], 183n, 100n, balanceWord(183n), other))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_WrongSubject")
        .withArgs(1n);
      await submit(registry, burnerA, 1n, [1n], 183n);
      // The audit's case: after an honest first vote, a quorum of votes about another subject.
      for (const [burner, licenseId, subject] of [
        [burnerB, 2n, other],
        [burnerC, 3n, otherAsset],
        [burnerC, 3n, other],
      ] as const) {
        await expect(submit(registry, burner, 1n, [licenseId], 5n, 100n, balanceWord(5n), subject))
          .to.be.revertedWithCustomError(registry, "VerificationRegistry_WrongSubject")
          .withArgs(1n);
      }
      expect((await registry.getJob(1n)).voteCount).to.equal(1n);
      await expect(registry.latestBalance(0, other.owner, other.asset)).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_NoResult",
      );
      await expect(submit(registry, burnerB, 1n, [2n], 183n)).to.emit(registry, "VerificationFulfilled");
      expect((await registry.latestBalance(0, addressToBytes32(HOLDER), addressToBytes32(TOKEN))).balance).to.equal(183n);
    });

    it("one operator may vote with several licenses; each counts once", async function () {
      const { registry, nodeRegistry, license, alice, burnerA } = await withJob();
      await license.connect(alice).buy(1n, ethers.MaxUint256); // id 4
      await nodeRegistry.connect(alice).delegate([4n], burnerA.address);
      await expect(submit(registry, burnerA, 1n, [1n, 4n], 5n)).to.emit(registry, "VerificationFulfilled");
    });

    it("submits many jobs in one transaction", async function () {
      const { registry, consumer, burnerA, burnerB } = await withJob();
      for (let i = 0; i < 4; i++) await registry.connect(consumer).requestSvmBalance(SOL_OWNER, SOL_MINT);
      const batch = [1n, 2n, 3n, 4n, 5n].map((jobId) =>
        submission(jobId, [0n], jobId, 7n, balanceWord(jobId), jobId === 1n ? EVM_SUBJECT : SOL_SUBJECT),
      );
      await registry.connect(burnerA).submitResults(batch.map((s) => ({ ...s, licenseIds: [1n] })));
      await registry.connect(burnerB).submitResults(batch.map((s) => ({ ...s, licenseIds: [2n] })));
      for (const { jobId } of batch) expect((await registry.getResult(jobId)).balance).to.equal(jobId);
    });

    it("ignores a submission for a job that is no longer open, and keeps the rest of the batch", async function () {
      const { registry, consumer, burnerA, burnerB, burnerC } = await withJob();
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN); // job 2
      await submit(registry, burnerA, 1n, [1n], 1n);
      await submit(registry, burnerB, 1n, [2n], 1n); // job 1 finalized
      const late = registry.connect(burnerC).submitResults([submission(1n, [3n], 1n, 1n), submission(2n, [3n], 2n, 1n)]);
      await expect(late).to.emit(registry, "SubmissionIgnored").withArgs(1n, burnerC.address, IgnoreReason.jobFinalized);
      expect(await registry.hasVoted(2n, 3n)).to.equal(true);
      expect(await registry.voteStatsOf(3n)).to.deep.equal([0n, 0n]);
    });

    it("ignores a submission after the deadline, even from a live node", async function () {
      const { registry, nodeRegistry, burnerA } = await withJob();
      await time.increase(JOB_TIMEOUT + 1n);
      await nodeRegistry.connect(burnerA)["heartbeat()"]();
      await expect(submit(registry, burnerA, 1n, [1n], 1n))
        .to.emit(registry, "SubmissionIgnored")
        .withArgs(1n, burnerA.address, IgnoreReason.deadlinePassed);
      expect(await registry.hasVoted(1n, 1n)).to.equal(false);
    });

    it("accepts a vote exactly at the deadline", async function () {
      const { registry, nodeRegistry, burnerA } = await withJob();
      const { deadline } = await registry.getJob(1n);
      await time.increaseTo(deadline - 60n);
      await nodeRegistry.connect(burnerA)["heartbeat()"]();
      await time.setNextBlockTimestamp(deadline);
      await expect(submit(registry, burnerA, 1n, [1n], 1n)).to.emit(registry, "VoteSubmitted");
    });

    it("ignores a submission for an expired job", async function () {
      const { registry, nodeRegistry, burnerA } = await withJob();
      await time.increase(JOB_TIMEOUT + 1n);
      await registry.expireJob(1n);
      await nodeRegistry.connect(burnerA)["heartbeat()"]();
      await expect(submit(registry, burnerA, 1n, [1n], 1n))
        .to.emit(registry, "SubmissionIgnored")
        .withArgs(1n, burnerA.address, IgnoreReason.jobExpired);
    });

    it("skips a second vote by a license (from an earlier transaction) without reverting the batch", async function () {
      const { registry, burnerA } = await withJob();
      await submit(registry, burnerA, 1n, [1n], 1n);
      for (const balance of [1n, 2n]) {
        await expect(submit(registry, burnerA, 1n, [1n], balance))
          .to.emit(registry, "SubmissionIgnored")
          .withArgs(1n, burnerA.address, IgnoreReason.alreadyVoted);
      }
      expect((await registry.getJob(1n)).voteCount).to.equal(1n);
    });

    it("reverts when one submission names a license twice", async function () {
      const { registry, burnerA } = await withJob();
      await expect(submit(registry, burnerA, 1n, [1n, 1n], 1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_DuplicateLicense")
        .withArgs(1n, 1n);
    });

    it("ignores a submission naming a license the caller does not run live (wrong operator, transferred, stale heartbeat)", async function () {
      const { registry, nodeRegistry, license, alice, outsider, burnerA, burnerB } = await withJob();
      await expect(submit(registry, burnerA, 1n, [1n, 2n], 1n))
        .to.emit(registry, "SubmissionIgnored")
        .withArgs(1n, burnerA.address, IgnoreReason.licenseNotLive);
      await license.connect(alice).transferFrom(alice.address, outsider.address, 1n);
      await expect(submit(registry, burnerA, 1n, [1n], 1n))
        .to.emit(registry, "SubmissionIgnored")
        .withArgs(1n, burnerA.address, IgnoreReason.licenseNotLive);
      await time.increase(LIVENESS_WINDOW + 1n);
      await expect(submit(registry, burnerB, 1n, [2n], 1n))
        .to.emit(registry, "SubmissionIgnored")
        .withArgs(1n, burnerB.address, IgnoreReason.licenseNotLive);
      expect((await registry.getJob(1n)).voteCount).to.equal(0n);
      expect(await nodeRegistry.submissionsOf(2n)).to.equal(0n);
    });

    it("reverts on an unknown job or a submission without licenses", async function () {
      const { registry, burnerA } = await withJob();
      await expect(submit(registry, burnerA, 9n, [1n], 1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_UnknownJob")
        .withArgs(9n);
      await expect(submit(registry, burnerA, 1n, [], 1n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_NoLicenses")
        .withArgs(1n);
    });

    it("stores votes beyond the head slot and refuses more than MAX_VOTES_PER_JOB", async function () {
      const { registry, nodeRegistry, license, admin, outsider } = await withJob();
      await license.connect(admin).airdrop(outsider.address, 17n); // ids 4..20
      const ids = Array.from({ length: 17 }, (_, i) => BigInt(i + 4));
      await nodeRegistry.connect(outsider).delegate(ids, outsider.address);
      await nodeRegistry.connect(outsider)["heartbeat()"]();
      // 16 votes on 16 different answers (so no quorum): every overflow word is used.
      for (let i = 0; i < 16; i++) await submit(registry, outsider, 1n, [ids[i]], BigInt(i));
      expect((await registry.getJob(1n)).voteCount).to.equal(16n);
      for (const id of ids.slice(0, 16)) expect(await registry.hasVoted(1n, id)).to.equal(true);
      // A full job is skipped, not reverted: the other jobs of the same batch still count.
      await registry.connect(outsider).stakeCollateral(outsider.address, REQUEST_FEE);
      await registry.connect(outsider).requestEvmBalance(HOLDER, TOKEN); // job 2
      const batch = [1n, 2n].map((jobId) => submission(jobId, [ids[16]], 0n, 1n));
      await expect(registry.connect(outsider).submitResults(batch))
        .to.emit(registry, "SubmissionIgnored")
        .withArgs(1n, outsider.address, IgnoreReason.voteLimitReached);
      expect(await registry.hasVoted(1n, ids[16])).to.equal(false);
      expect(await registry.hasVoted(2n, ids[16])).to.equal(true);
    });

    it("finalizes on votes spread over overflow words, with the right agreeing set", async function () {
      const { registry, nodeRegistry, license, admin, consumer, outsider } = await loadFixture(fixture);
      await nodeRegistry.connect(admin).setQuorum(8n);
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await license.connect(admin).airdrop(outsider.address, 14n); // ids 4..17
      const ids = Array.from({ length: 14 }, (_, i) => BigInt(i + 4));
      await nodeRegistry.connect(outsider).delegate(ids, outsider.address);
      await nodeRegistry.connect(outsider)["heartbeat()"]();
      // Six lone answers fill the head slot and half of the first overflow word; then eight agree.
      for (let i = 0; i < 6; i++) await submit(registry, outsider, 1n, [ids[i]], 100n + BigInt(i));
      for (let i = 6; i < 13; i++) await submit(registry, outsider, 1n, [ids[i]], 7n);
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.open);
      await expect(submit(registry, outsider, 1n, [ids[13]], 7n)).to.emit(registry, "VerificationFulfilled");

      for (const id of ids.slice(0, 6)) expect(await registry.voteStatsOf(id)).to.deep.equal([0n, 1n]);
      for (const id of ids.slice(6)) {
        expect(await registry.voteStatsOf(id)).to.deep.equal([1n, 0n]);
        expect(await nodeRegistry.submissionsOf(id)).to.equal(1n);
        expect(await registry.claimableFees(id)).to.equal(REQUEST_FEE / 8n);
      }
    });
  });

  describe("audit findings (each failed before the result commitment)", function () {
    it("a license owner re-delegating to vote elsewhere and back skips only that job of its node's batch", async function () {
      const { registry, nodeRegistry, consumer, alice, burnerA, outsider } = await withJob();
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN); // job 2
      // Alice lends license 1 to another operator for one vote on job 1, then gives it back to burnerA,
      // whose node prepared its batch while license 1 had not voted anywhere.
      await nodeRegistry.connect(alice).delegate([1n], outsider.address);
      await nodeRegistry.connect(outsider)["heartbeat()"]();
      await submit(registry, outsider, 1n, [1n], 183n);
      await nodeRegistry.connect(alice).delegate([1n], burnerA.address);
      await nodeRegistry.connect(burnerA)["heartbeat()"]();
      const batch = registry.connect(burnerA).submitResults([submission(1n, [1n], 183n), submission(2n, [1n], 183n)]);
      await expect(batch).to.emit(registry, "SubmissionIgnored").withArgs(1n, burnerA.address, IgnoreReason.alreadyVoted);
      expect(await registry.hasVoted(2n, 1n)).to.equal(true);
      expect((await registry.getJob(1n)).voteCount).to.equal(1n);
    });

    it("a QueryResult of 1,000 Solana token accounts (165,000 bytes) finalizes for the gas of a 32-byte one, within a node's allowance", async function () {
      const { registry, consumer, burnerA, burnerB } = await withJob();
      await registry.connect(consumer).requestSvmBalance(SOL_OWNER, SOL_MINT); // job 2
      const thousandAccounts = `0x${"ab".repeat(165 * 1000)}`;
      const gasOfFinalization = async (jobId: bigint, queryResult: string, subject: Subject) => {
        await submit(registry, burnerA, jobId, [1n], 1000n, 7n, queryResult, subject);
        const job = await registry.getJob(jobId);
        const receipt = await (await submit(registry, burnerB, jobId, [2n], 1000n, 7n, queryResult, subject)).wait();
        expect((await registry.getResult(jobId)).queryResultHash).to.equal(queryResultHash(queryResult));
        return { gasUsed: receipt!.gasUsed, allowance: finalizationGasOf(job) };
      };
      const word = await gasOfFinalization(1n, balanceWord(1000n), EVM_SUBJECT);
      const accounts = await gasOfFinalization(2n, thousandAccounts, SOL_SUBJECT);
      // Same storage either way; only the first-time slots of the first finalization differ.
      expect(accounts.gasUsed).to.be.lessThanOrEqual(word.gasUsed + 25_000n);
      // The node adds this much for a vote that turns out to finalize: more than the whole finalizing vote.
      expect(accounts.gasUsed).to.be.lessThan(accounts.allowance);
    });

    it("a node's allowance covers the costliest finalization: a full job of first-time and epoch-moving licenses", async function () {
      const { registry, nodeRegistry, license, consumer, admin, alice, burnerA, burnerB } = await loadFixture(fixture);
      expect(await registry.MAX_VOTES_PER_JOB()).to.equal(MAX_VOTES_PER_JOB);
      const maxQuorum = await nodeRegistry.MAX_QUORUM();
      await nodeRegistry.connect(admin).setQuorum(maxQuorum);
      // Alice's license 1 and 15 more (ids 4..18; 2 and 3 are bob's and carol's).
      await license.connect(alice).buy(MAX_VOTES_PER_JOB - 1n, ethers.MaxUint256);
      const ids = [1n, ...Array.from({ length: Number(MAX_VOTES_PER_JOB) - 1 }, (_, i) => BigInt(i + 4))];
      const winners = ids.slice(0, Number(maxQuorum));
      const losers = ids.slice(Number(maxQuorum));
      await nodeRegistry.connect(alice).delegate(winners, burnerA.address);
      await nodeRegistry.connect(alice).delegate(losers, burnerB.address);
      // The winners earn votes in epoch 0, which their next agreeing vote must move out of their accounts.
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN); // job 1
      await submit(registry, burnerA, 1n, winners, 1n);
      await time.increase(EPOCH_DURATION);
      for (const burner of [burnerA, burnerB]) await nodeRegistry.connect(burner)["heartbeat()"]();

      // Job 2, on a subject never finalized. A node reads it with no vote yet and sizes its vote's gas as
      // the node does: the estimate then (a plain first vote), its margin, and the finalization allowance.
      await registry.connect(consumer).requestSvmBalance(SOL_OWNER, SOL_MINT);
      const lastVote = [submission(2n, winners.slice(0, 1), 1n, 7n, balanceWord(1n), SOL_SUBJECT)];
      const estimate = await registry.connect(burnerA).submitResults.estimateGas(lastVote);
      const gasLimit = (estimate * 130n) / 100n + finalizationGasOf(await registry.getJob(2n));
      // Before it lands, the losers vote for the first time (split over two wrong answers, short of the
      // quorum), then all but one winner.
      await submit(registry, burnerB, 2n, losers.slice(0, 4), 2n, 7n, balanceWord(2n), SOL_SUBJECT);
      await submit(registry, burnerB, 2n, losers.slice(4), 3n, 7n, balanceWord(3n), SOL_SUBJECT);
      await submit(registry, burnerA, 2n, winners.slice(1), 1n, 7n, balanceWord(1n), SOL_SUBJECT);
      const needed = await registry.connect(burnerA).submitResults.estimateGas(lastVote);
      expect(needed).to.be.greaterThan(500_000n); // it is the costly case
      // The allowance alone covers the whole finalizing vote, before the estimate's margin (measured on the
      // deployed bytecode: coverage's instrumentation adds ~15% to both sides, which the margin absorbs).
      if (!hre.globalOptions.coverage) expect(needed).to.be.lessThan(finalizationGasOf(await registry.getJob(2n)));
      expect(needed).to.be.lessThan(gasLimit);
      const finalizing = await registry.connect(burnerA).submitResults(lastVote, { gasLimit });
      await expect(finalizing).to.emit(registry, "VerificationFulfilled");
    });
  });

  describe("results", function () {
    it("latestBalance follows job order, not the source block the finalizing node reports", async function () {
      const { registry, consumer, burnerA, burnerB } = await withJob();
      // Job 1 finalizes with an absurd source block from its last voter...
      await submit(registry, burnerA, 1n, [1n], 183n, 100n);
      await submit(registry, burnerB, 1n, [2n], 183n, 2n ** 64n - 1n);
      // ...yet the later job 2 still becomes the latest, whatever block it reports.
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      await submit(registry, burnerA, 2n, [1n], 500n, 200n);
      await submit(registry, burnerB, 2n, [2n], 500n, 200n);
      const [balance, , , jobId] = await registry.latestBalance(0, addressToBytes32(HOLDER), addressToBytes32(TOKEN));
      expect([balance, jobId]).to.deep.equal([500n, 2n]);
    });

    it("latestBalance keeps a later job when an earlier one finalizes after it", async function () {
      const { registry, consumer, burnerA, burnerB } = await withJob();
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN); // job 2
      for (const burner of [burnerA, burnerB]) {
        const licenseId = burner === burnerA ? 1n : 2n;
        await submit(registry, burner, 2n, [licenseId], 20n, 200n);
      }
      for (const burner of [burnerA, burnerB]) {
        const licenseId = burner === burnerA ? 1n : 2n;
        await submit(registry, burner, 1n, [licenseId], 10n, 100n); // older read, finalized later
      }
      const [balance, sourceBlock, , jobId] = await registry.latestBalance(0, addressToBytes32(HOLDER), addressToBytes32(TOKEN));
      expect([balance, sourceBlock, jobId]).to.deep.equal([20n, 200n, 2n]);
    });

    it("reverts when a job has no result", async function () {
      const { registry } = await withJob();
      await expect(registry.latestBalance(1, SOL_OWNER, SOL_MINT))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_NoResult")
        .withArgs(1, SOL_OWNER, SOL_MINT);
      expect(await registry.getResult(42n)).to.deep.equal([JobStatus.none, 0n, ethers.ZeroHash, 0n, 0n]);
    });

    it("stores every balance exactly, up to 2^256 - 1 (a hostile token may report any word)", async function () {
      const { registry, consumer, burnerA, burnerB } = await withJob();
      const balances = [2n ** 192n - 2n, 2n ** 192n - 1n, 2n ** 192n, 2n ** 256n - 1n, 0n];
      for (let i = 1; i < balances.length; i++) await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      for (const [i, balance] of balances.entries()) {
        const jobId = BigInt(i + 1);
        await submit(registry, burnerA, jobId, [1n], balance, 9n);
        await submit(registry, burnerB, jobId, [2n], balance, 9n);
        const result = await registry.getResult(jobId);
        expect([result.balance, result.sourceBlock, result.queryResultHash]).to.deep.equal([
          balance,
          9n,
          queryResultHash(balanceWord(balance)),
        ]);
      }
      expect((await registry.latestBalance(0, addressToBytes32(HOLDER), addressToBytes32(TOKEN)))[0]).to.equal(0n);
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

  describe("consumer callbacks", function () {
    async function withConsumerContract(mode: ConsumerMode, gasLimit: bigint) {
      const context = await loadFixture(fixture);
      const { registry, outsider } = context;
      const mock = await ethers.deployContract("MockVerificationConsumer", [await registry.getAddress()]);
      await registry.connect(outsider).stakeCollateral(await mock.getAddress(), 100n * E18);
      await mock.setMode(mode);
      await expect(mock.enableCallbacks(gasLimit))
        .to.emit(registry, "CallbackGasLimitUpdated")
        .withArgs(await mock.getAddress(), 0n, gasLimit);
      expect(await registry.callbackGasLimitOf(await mock.getAddress())).to.equal(gasLimit);
      await mock.requestEvm(HOLDER, TOKEN);
      return { ...context, mock };
    }

    it("calls the consumer back with the result", async function () {
      const { registry, mock, burnerA, burnerB } = await withConsumerContract(ConsumerMode.Record, 200_000n);
      await submit(registry, burnerA, 1n, [1n], 42n, 9n);
      await submit(registry, burnerB, 1n, [2n], 42n, 9n);
      expect(await mock.callbackCount()).to.equal(1n);
      expect(await mock.lastJobId()).to.equal(1n);
      expect(await mock.lastBalance()).to.equal(42n);
      expect(await mock.lastSourceBlock()).to.equal(9n);
      // The callee got its gas limit, less its own dispatch code before gasleft() (more under coverage).
      expect(await mock.lastGasAtEntry()).to.be.within(200_000n - 2_000n, 200_000n);
    });

    it("the callee gets its full gas limit even when the finalizer sends the least gas that works", async function () {
      const { registry, mock, burnerA, burnerB } = await withConsumerContract(ConsumerMode.Record, 200_000n);
      await submit(registry, burnerA, 1n, [1n], 42n);
      const batch = [submission(1n, [2n], 42n, 1n)];
      const leastGas = await registry.connect(burnerB).submitResults.estimateGas(batch);
      await registry.connect(burnerB).submitResults(batch, { gasLimit: leastGas });
      expect(await mock.callbackCount()).to.equal(1n);
      expect(await mock.lastGasAtEntry()).to.be.within(200_000n - 2_000n, 200_000n);
    });

    it("a callback re-entering the registry fails alone; finalization stands", async function () {
      const { registry, mock, burnerA, burnerB } = await withConsumerContract(ConsumerMode.Reenter, 200_000n);
      await submit(registry, burnerA, 1n, [1n], 42n);
      await expect(submit(registry, burnerB, 1n, [2n], 42n))
        .to.emit(registry, "CallbackFailed")
        .withArgs(1n, await mock.getAddress());
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.finalized);
    });

    it("the job keeps the callback gas limit it was opened with", async function () {
      const { registry, mock, burnerA, burnerB } = await withConsumerContract(ConsumerMode.Record, 200_000n);
      await mock.enableCallbacks(0n);
      await submit(registry, burnerA, 1n, [1n], 42n);
      await submit(registry, burnerB, 1n, [2n], 42n);
      expect(await mock.callbackCount()).to.equal(1n);
    });

    it("the example consumer accepts callbacks from the registry only", async function () {
      const { mock, outsider } = await withConsumerContract(ConsumerMode.Record, 100_000n);
      await expect(
        mock.connect(outsider).onVerificationFulfilled(1n, 0, ethers.ZeroHash, ethers.ZeroHash, 1n, 1n),
      ).to.be.revertedWithCustomError(mock, "MockVerificationConsumer_NotRegistry");
    });

    it("a reverting callback does not block finalization", async function () {
      const { registry, mock, burnerA, burnerB } = await withConsumerContract(ConsumerMode.Revert, 100_000n);
      await submit(registry, burnerA, 1n, [1n], 42n);
      await expect(submit(registry, burnerB, 1n, [2n], 42n))
        .to.emit(registry, "CallbackFailed")
        .withArgs(1n, await mock.getAddress());
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.finalized);
    });

    it("a callback that burns all its gas does not block finalization", async function () {
      const { registry, burnerA, burnerB } = await withConsumerContract(ConsumerMode.BurnGas, 300_000n);
      await submit(registry, burnerA, 1n, [1n], 42n);
      await expect(submit(registry, burnerB, 1n, [2n], 42n)).to.emit(registry, "CallbackFailed");
      expect((await registry.getResult(1n)).status).to.equal(JobStatus.finalized);
    });

    it("shows each job's callback gas limit as it was at the request, whatever the consumer sets later", async function () {
      const { registry, mock } = await withConsumerContract(ConsumerMode.Record, 200_000n);
      await mock.enableCallbacks(0n);
      expect((await registry.getJob(1n)).callbackGasLimit).to.equal(200_000n);
      await mock.requestEvm(HOLDER, TOKEN);
      expect((await registry.getJob(2n)).callbackGasLimit).to.equal(0n);
    });

    it("reverts when the finalizer gives too little gas for the callback", async function () {
      const { registry, burnerA, burnerB } = await withConsumerContract(ConsumerMode.Record, 900_000n);
      await submit(registry, burnerA, 1n, [1n], 42n);
      await expect(registry.connect(burnerB).submitResults([submission(1n, [2n], 42n, 1n)], { gasLimit: 600_000n }))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_InsufficientGasForCallback")
        .withArgs(1n, 900_000n);
    });

    it("refuses a callback gas limit above the maximum", async function () {
      const { registry, consumer } = await loadFixture(fixture);
      await expect(registry.connect(consumer).setCallbackGasLimit(1_000_001n))
        .to.be.revertedWithCustomError(registry, "VerificationRegistry_InvalidCallbackGasLimit")
        .withArgs(1_000_001n);
    });
  });

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
