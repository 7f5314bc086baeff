import { mkdtemp, readFile, rm, stat, chmod, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import type { TransactionReceipt } from "ethers";

import { VerificationRegistry__factory } from "../../../typechain-types/index.ts";

import { BURNER_FILE, loadOrCreateBurner } from "../../../src/node/burner.ts";
import { loadNodeConfig, redactedNodeConfig } from "../../../src/node/config.ts";
import { queryResultHash } from "../../../src/common/query-result.ts";
import { IgnoreReason, MAX_VOTES_PER_JOB } from "@avn/protocol/constants";
import { finalizationGasOf } from "../../../src/node/job-runner.ts";
import { jobsToAnswerAgain } from "../../../src/node/skipped-votes.ts";
import { NodeStateStore } from "../../../src/node/state-store.ts";
import { describeError } from "../../../src/common/describe-error.ts";

describe("circuit node: units", function () {
  let dir: string;
  beforeEach(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "node-unit-"));
  });
  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  describe("burner wallet", function () {
    it("is generated once with mode 0600 and reused by every later start", async function () {
      const first = await loadOrCreateBurner(dir);
      expect(first.created).to.equal(true);
      expect((await stat(path.join(dir, BURNER_FILE))).mode & 0o777).to.equal(0o600);
      const second = await loadOrCreateBurner(dir);
      expect(second.created).to.equal(false);
      expect(second.wallet.address).to.equal(first.wallet.address);
      expect(second.wallet.privateKey).to.equal(first.wallet.privateKey);
    });

    it("gives one key to processes starting at once", async function () {
      const burners = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateBurner(dir)));
      expect(new Set(burners.map((burner) => burner.wallet.address)).size).to.equal(1);
      expect(burners.filter((burner) => burner.created).length).to.equal(1);
    });

    it("tightens a key file others can read, and refuses a corrupt one without overwriting it or printing it", async function () {
      const { wallet } = await loadOrCreateBurner(dir);
      const file = path.join(dir, BURNER_FILE);
      await chmod(file, 0o644);
      expect((await loadOrCreateBurner(dir)).tightenedMode).to.equal(true);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);

      const corrupt = JSON.stringify({ address: wallet.address, privateKey: `${wallet.privateKey.slice(0, -4)}zzzz` });
      await writeFile(file, corrupt);
      const error = (await loadOrCreateBurner(dir).catch((reason: unknown) => reason)) as Error;
      expect(error.message).to.match(/no valid private key/);
      expect(error.message).to.not.include(wallet.privateKey.slice(2, 20));
      expect(await readFile(file, "utf8")).to.equal(corrupt); // never replaced: the old key may hold funds
    });
  });

  describe("journal", function () {
    it("journals a commit with its votes and its reveal; a failed reveal forgets the commit's votes", function () {
      const store = new NodeStateStore(path.join(dir, "state.sqlite"));
      try {
        store.anchor("901:0xabc:0xgenesis");
        const votes = [{ jobId: 7n, licenseId: 1n, jobBlock: 120 }];
        const sourceBlocks = [{ number: 99n, hash: `0x${"ab".repeat(32)}` }];
        const commit = store.recordTx({ nonce: 1, kind: "commitResults", raw: "0x01", hash: "0xaa" }, votes, {
          data: "0xreveal",
          extraGas: 600_000n,
          sourceBlocks,
        });
        expect(store.hasVote(7n, 1n)).to.equal(true);
        // Not ready until the commit is mined; then ready until sent.
        expect(store.readyReveals()).to.deep.equal([]);
        store.markTx(commit, "mined");
        expect(store.readyReveals()).to.deep.equal([{ commitTxId: commit, data: "0xreveal", extraGas: 600_000n, sourceBlocks }]);
        const reveal = store.recordTx({ nonce: 2, kind: "revealResults", raw: "0x02", hash: "0xbb" });
        store.markRevealed(commit, reveal);
        expect(store.readyReveals()).to.deep.equal([]);
        // The reveal is dropped: the commit's votes are forgotten (to be answered again), and nothing is left to reveal.
        expect(store.forgetTx(reveal, "dropped")).to.equal(120);
        expect(store.hasVote(7n, 1n)).to.equal(false);
        store.markTx(commit, "mined");
        expect(store.readyReveals()).to.deep.equal([]);
        // A skipped submission of a mined reveal forgets the commit's vote for that job only.
        const second = store.recordTx(
          { nonce: 3, kind: "commitResults", raw: "0x03", hash: "0xcc" },
          [
            { jobId: 8n, licenseId: 1n, jobBlock: 130 },
            { jobId: 9n, licenseId: 1n, jobBlock: 131 },
          ],
          { data: "0xreveal2", extraGas: 0n },
        );
        store.markTx(second, "mined");
        const secondReveal = store.recordTx({ nonce: 4, kind: "revealResults", raw: "0x04", hash: "0xdd" });
        store.markRevealed(second, secondReveal);
        expect(store.forgetSkippedVotes(secondReveal, [9n])).to.equal(131);
        expect([store.hasVote(8n, 1n), store.hasVote(9n, 1n)]).to.deep.equal([true, false]);
        // A reveal withdrawn (its Ethereum block reorged away): its votes and its reveal are forgotten, never sent.
        const third = store.recordTx(
          { nonce: 5, kind: "commitResults", raw: "0x05", hash: "0xef" },
          [{ jobId: 10n, licenseId: 1n, jobBlock: 140 }],
          {
            data: "0xreveal4",
            extraGas: 0n,
            sourceBlocks,
          },
        );
        store.markTx(third, "mined");
        expect(store.readyReveals().map((ready) => ready.commitTxId)).to.deep.equal([third]);
        expect(store.withdrawReveal(third)).to.equal(140);
        expect([store.hasVote(10n, 1n), store.readyReveals()]).to.deep.equal([false, []]);
        // Another chain: the reveals go with the rest.
        store.recordTx({ nonce: 6, kind: "commitResults", raw: "0x06", hash: "0xee" }, [], { data: "0xreveal3", extraGas: 0n });
        store.anchor("901:0xabc:0xother");
        expect(store.readyReveals()).to.deep.equal([]);
      } finally {
        store.close();
      }
    });

    it("records a transaction with its votes at once, forgets them when it is dropped or reverts, and clears on another chain", function () {
      const store = new NodeStateStore(path.join(dir, "state.sqlite"));
      try {
        expect(store.anchor("901:0xabc:0xgenesis")).to.equal(false);
        const id = store.recordTx({ nonce: 4, kind: "submitResults", raw: "0x01", hash: "0xaa" }, [
          { jobId: 7n, licenseId: 1n, jobBlock: 120 },
          { jobId: 8n, licenseId: 1n, jobBlock: 118 },
        ]);
        expect(store.hasVote(7n, 1n)).to.equal(true);
        expect(store.highestNonce()).to.equal(4);
        // A second journal entry for the same vote is impossible: the transaction is refused whole.
        expect(() =>
          store.recordTx({ nonce: 5, kind: "submitResults", raw: "0x02", hash: "0xbb" }, [{ jobId: 7n, licenseId: 1n, jobBlock: 120 }]),
        ).to.throw();
        expect(store.pendingTxs().map((tx) => tx.nonce)).to.deep.equal([4]);
        store.replaceTx(id, "0x03", "0xcc");
        expect(store.pendingTxs()[0].hashes).to.deep.equal(["0xaa", "0xcc"]);
        expect(store.forgetTx(id, "dropped")).to.equal(118);
        expect(store.hasVote(7n, 1n)).to.equal(false);
        expect(store.pendingTxs()).to.deep.equal([]);

        store.setCursor(200);
        // A rescan asked while a pass runs survives the pass's own cursor update, and is taken once.
        store.requestRescan(150);
        store.requestRescan(170);
        store.setCursor(210);
        expect(store.takeRescan()).to.equal(150);
        expect(store.takeRescan()).to.equal(undefined);
        store.setCursor(200);
        store.recordTx({ nonce: 6, kind: "heartbeat", raw: "0x04", hash: "0xdd" });
        expect(store.anchor("901:0xabc:0xgenesis")).to.equal(false);
        expect(store.cursor()).to.equal(200);
        expect(store.anchor("901:0xabc:0xother")).to.equal(true);
        expect(store.cursor()).to.equal(undefined);
        expect(store.pendingTxs()).to.deep.equal([]);
      } finally {
        store.close();
      }
    });
  });

  describe("skipped submissions", function () {
    it("answers again the jobs skipped because a license voted elsewhere or left, and only those", function () {
      const registry = VerificationRegistry__factory.connect("0x00000000000000000000000000000000000000aa", null);
      const me = "0x00000000000000000000000000000000000000b1";
      const skipped = (jobId: bigint, operator: string, reason: number) => {
        const { data, topics } = registry.interface.encodeEventLog("SubmissionIgnored", [jobId, operator, reason]);
        return { address: "0x00000000000000000000000000000000000000AA", data, topics };
      };
      const receipt = {
        to: "0x00000000000000000000000000000000000000aa",
        logs: [
          skipped(7n, me, IgnoreReason.alreadyVoted),
          skipped(8n, me, IgnoreReason.jobFinalized),
          skipped(9n, me, IgnoreReason.licenseNotLive),
          skipped(10n, "0x00000000000000000000000000000000000000b2", IgnoreReason.alreadyVoted),
        ],
      } as unknown as TransactionReceipt;
      expect(jobsToAnswerAgain(receipt, registry, me)).to.deep.equal([7n, 9n]);

      const store = new NodeStateStore(path.join(dir, "state.sqlite"));
      try {
        const id = store.recordTx({ nonce: 1, kind: "submitResults", raw: "0x01", hash: "0xaa" }, [
          { jobId: 7n, licenseId: 1n, jobBlock: 30 },
          { jobId: 7n, licenseId: 2n, jobBlock: 30 },
          { jobId: 8n, licenseId: 1n, jobBlock: 20 },
          { jobId: 9n, licenseId: 1n, jobBlock: 40 },
        ]);
        expect(store.forgetSkippedVotes(id, [7n, 9n])).to.equal(30);
        expect(store.votesFor(7n)).to.deep.equal([]);
        expect(store.votesFor(9n)).to.deep.equal([]);
        expect(store.votesFor(8n)).to.deep.equal([1n]);
      } finally {
        store.close();
      }
    });
  });

  describe("configuration and logging", function () {
    const env = {
      OWNERS_ALLOWLIST: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      L2_RPC_URLS: "https://l2.example/v1/SECRET",
      VERIFICATION_REGISTRY: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
      EVM_RPC_URLS: "https://eth.example/v2/SECRET",
      SOLANA_RPC_URLS: "https://sol.example/?api-key=SECRET",
    };

    it("lists every configuration problem at once", function () {
      expect(() =>
        loadNodeConfig({ ...env, OWNERS_ALLOWLIST: "0x70997970c51812dc3A010C7d01b50e0d17dc79C8", L2_RPC_URLS: "ftp://x" }),
      ).to.throw(/OWNERS_ALLOWLIST[\s\S]*L2_RPC_URLS/);
      expect(() => loadNodeConfig({})).to.throw(/OWNERS_ALLOWLIST[\s\S]*VERIFICATION_REGISTRY/);
    });

    it("logs URLs by origin only, and error descriptions without URLs", function () {
      const config = loadNodeConfig(env);
      expect(config.NODE_CACHE_DIR).to.equal("cache");
      expect(JSON.stringify(redactedNodeConfig(config))).to.not.include("SECRET");
      const error = Object.assign(new Error("long text"), { shortMessage: "could not reach https://l2.example/v1/SECRET (timeout)" });
      expect(describeError(error)).to.equal("could not reach <url> (timeout)");
    });
  });

  describe("answers and their gas", function () {
    it("hashes a QueryResult in either of the API's spellings, and refuses what is not hex bytes", function () {
      const word = `0x${"00".repeat(31)}b7`;
      expect(queryResultHash(word)).to.equal(queryResultHash(word.slice(2)));
      // The empty Solana QueryResult (no account) is the hash of no bytes.
      expect(queryResultHash("")).to.equal("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
      for (const bad of ["0xabc", "zz", "0x0g"]) expect(() => queryResultHash(bad)).to.throw(/hex bytes/);
    });

    it("sizes a possibly finalizing vote's extra gas from the job's callback and the most votes it can settle, not the answer's length", function () {
      const plain = finalizationGasOf({ callbackGasLimit: 0n });
      // Each of the job's possible votes may write a fresh license account and move an epoch's votes.
      expect(plain).to.be.greaterThanOrEqual(MAX_VOTES_PER_JOB * 30_000n);
      const withCallback = finalizationGasOf({ callbackGasLimit: 630_000n });
      // The callback's limit, the 1/63 the EIP-150 rule keeps back, and a buffer.
      expect(withCallback - plain).to.be.greaterThanOrEqual(630_000n + 10_000n);
    });
  });
});
