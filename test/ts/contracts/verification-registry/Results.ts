import { expect } from "chai";

import { addressToBytes32, balanceWord, E18 } from "../../../helpers/protocol.ts";
import { queryResultHash } from "../../../../src/common/query-result.ts";
import { JobStatus } from "@avn/protocol/constants";
import { ethers, loadFixture, fixture, ConsumerMode, HOLDER, TOKEN, SOL_OWNER, SOL_MINT, submission, submit, withJob } from "./fixture.ts";

describe("VerificationRegistry: results and consumer callbacks", function () {
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
});
