import { expect } from "chai";
import hre from "hardhat";

import {
  addressToBytes32,
  balanceWord,
  E18,
  EPOCH_DURATION,
  JOB_TIMEOUT,
  LIVENESS_WINDOW,
  REQUEST_FEE,
  resultHash,
} from "../../../helpers/protocol.ts";
import { queryResultHash } from "../../../../src/common/query-result.ts";
import { finalizationGasOf } from "../../../../src/node/job-runner.ts";
import { revealCommitmentOf } from "@avn/protocol/commit-reveal";
import { IgnoreReason, JobStatus, MAX_VOTES_PER_JOB } from "@avn/protocol/constants";
import {
  ethers,
  loadFixture,
  time,
  fixture,
  HOLDER,
  TOKEN,
  SOL_OWNER,
  SOL_MINT,
  type Subject,
  EVM_SUBJECT,
  SOL_SUBJECT,
  submission,
  submit,
  withJob,
} from "./fixture.ts";

describe("VerificationRegistry: submitResults", function () {
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

  describe("commit, then reveal", function () {
    it("records a commitment as an event only, and a reveal casts its votes as submitResults does, naming the commitment", async function () {
      const { registry, burnerA, burnerB } = await withJob();
      const salt = ethers.id("salt");
      const reveal = registry.interface.encodeFunctionData("revealResults", [salt, [submission(1n, [1n], 5n)]]) as `0x${string}`;
      const commitment = revealCommitmentOf(burnerA.address as `0x${string}`, reveal);
      // The contract's own computation of the commitment is the one the nodes make.
      expect(await registry.revealCommitment(burnerA.address, salt, ethers.dataSlice(reveal, 36))).to.equal(commitment);
      const committed = await (await registry.connect(burnerA).commitResults(commitment)).wait();
      expect(committed!.logs).to.have.length(1);
      await expect(registry.connect(burnerA).commitResults(commitment))
        .to.emit(registry, "ResultsCommitted")
        .withArgs(burnerA.address, commitment);
      const tx = burnerA.sendTransaction({ to: await registry.getAddress(), data: reveal });
      await expect(tx).to.emit(registry, "ResultsRevealed").withArgs(burnerA.address, commitment);
      await expect(tx).to.emit(registry, "VoteSubmitted");
      expect(await registry.hasVoted(1n, 1n)).to.equal(true);
      // Another operator sending the same calldata reveals another commitment (bound to the operator), and its
      // license's vote is checked as any other: B is not license 1's operator, so it is skipped.
      await expect(burnerB.sendTransaction({ to: await registry.getAddress(), data: reveal }))
        .to.emit(registry, "ResultsRevealed")
        .withArgs(burnerB.address, revealCommitmentOf(burnerB.address as `0x${string}`, reveal));
      // A reveal's votes are checked as submitResults' are: a duplicate license reverts the whole call.
      await expect(registry.connect(burnerB).revealResults(salt, [submission(1n, [2n, 2n], 5n)])).to.be.revertedWithCustomError(
        registry,
        "VerificationRegistry_DuplicateLicense",
      );
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

    it("a node's allowance covers the costliest finalization: a full job, its losers voting for the first time", async function () {
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
      // The winners agreed once before (their accounts are written); the losers never voted.
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
      expect(needed).to.be.greaterThan(350_000n); // it is the costly case (16 votes, 8 paid, 8 first disagreements)
      // The allowance alone covers the whole finalizing vote, before the estimate's margin (measured on the
      // deployed bytecode: coverage's instrumentation adds ~15% to both sides, which the margin absorbs).
      if (!hre.globalOptions.coverage) expect(needed).to.be.lessThan(finalizationGasOf(await registry.getJob(2n)));
      expect(needed).to.be.lessThan(gasLimit);
      const finalizing = await registry.connect(burnerA).submitResults(lastVote, { gasLimit });
      await expect(finalizing).to.emit(registry, "VerificationFulfilled");
    });
  });
});
