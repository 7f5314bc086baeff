import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { Contract, ContractFactory, Wallet } from "ethers";
import hre, { network } from "hardhat";

import type { VerificationRegistry } from "../../../typechain-types/index.ts";
import type { SourceReaders } from "../../../src/node/answers.ts";
import { finalizationGasOf, runJobPass, type JobRunnerOptions } from "../../../src/node/job-runner.ts";
import { NodeStateStore, type VoteIntent } from "../../../src/node/state-store.ts";
import type { TxOutcome } from "../../../src/node/tx-sender.ts";
import { queryResultHash } from "../../../src/common/query-result.ts";
import { addressToBytes32, balanceWord, deployProtocol } from "../../helpers/protocol.ts";
import { captureLogs } from "./log-capture.ts";
import { HashPinnedEvmReads } from "../../../src/chains/evm/hash-pinned-reads.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil } from "../../../src/devnet/anvil.ts";
import { installMulticall3 } from "../../../src/devnet/op/l2.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture } = networkHelpers;

const HOLDER = "0x00000000000000000000000000000000000000A1";
const OTHER_HOLDER = "0x00000000000000000000000000000000000000A2";
const TOKEN = "0x00000000000000000000000000000000000000B2";
const BALANCE = 1_234n;

interface Submission {
  jobId: bigint;
  licenseIds: bigint[];
  owner: string;
  asset: string;
  balance: bigint;
  queryResultHash: string;
}

interface SentBatch {
  id: number;
  data: string;
  jobs: bigint[];
  submissions: Submission[];
  votes: VoteIntent[];
  extraGas: bigint;
  /** The reveal's calldata, journaled with the commit. */
  revealData: string;
}

/**
 * The sender as the job runner sees it: it journals the votes (and a commit's reveal) with a stand-in
 * transaction, as TxSender does before broadcasting, and records the batch instead of sending it, so only the
 * journal (never an on-chain vote) keeps a job from being answered twice. A commit counts as mined at once
 * (its reveal is then ready); a batch is a commit's revealed submissions. `failNext` makes the next commit throw.
 */
class RecordingSender {
  readonly batches: SentBatch[] = [];
  /** The reveals sent: their calldata, journal id and the gas added for a finalization. */
  readonly reveals: Array<{ data: string; id: number; extraGas: bigint }> = [];
  failNext = false;
  #nonce = 0;

  constructor(
    private readonly store: NodeStateStore,
    private readonly registry: VerificationRegistry,
  ) {}

  async send(
    kind: string,
    _to: string,
    data: string,
    votes: VoteIntent[] = [],
    extraGas = 0n,
    reveal?: { data: string; extraGas: bigint },
  ): Promise<{ id: number; outcome: Promise<TxOutcome> }> {
    if (this.failNext && kind === "commitResults") {
      this.failNext = false;
      throw new Error("the L2 RPC is down");
    }
    const nonce = this.#nonce++;
    const id = this.store.recordTx({ nonce, kind, raw: data, hash: `0x${nonce.toString(16).padStart(64, "0")}` }, votes, reveal);
    this.store.markTx(id, "mined");
    if (kind === "revealResults") {
      this.reveals.push({ data, id, extraGas });
      return { id, outcome: Promise.resolve("mined") };
    }
    expect(kind).to.equal("commitResults");
    const [, submissions] = this.registry.interface.decodeFunctionData("revealResults", reveal!.data) as unknown as [string, Submission[]];
    this.batches.push({
      id,
      data,
      jobs: submissions.map((submission) => submission.jobId),
      submissions,
      votes,
      extraGas: reveal!.extraGas,
      revealData: reveal!.data,
    });
    return { id, outcome: Promise.resolve("mined") };
  }

  /** The jobs of each batch sent since the last call. */
  take(): bigint[][] {
    return this.batches.splice(0).map((batch) => batch.jobs);
  }
}

/** An EVM source that answers every query with BALANCE, or fails for the jobs' owners named in `failing`. */
function fakeReaders(failing: Set<string> = new Set()): SourceReaders {
  return {
    evm: {
      balanceOf: async (_asset, owner) => {
        if (failing.has(owner.toLowerCase())) throw new Error("the source RPC timed out");
        return { balance: BALANCE, queryResult: balanceWord(BALANCE), blockNumber: 100n };
      },
    },
    solana: {
      balanceOf: async () => {
        throw new Error("no Solana job in these tests");
      },
    },
  };
}

async function fixture() {
  const protocol = await deployProtocol(ethers);
  return { ...protocol, startBlock: (await ethers.provider.getBlockNumber()) + 1 };
}

describe("circuit node: job runner (cursor, rescans, batches) on a Hardhat network chain", function () {
  let dir: string;
  let stores: NodeStateStore[];

  beforeEach(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "job-runner-"));
    stores = [];
  });
  afterEach(async function () {
    for (const store of stores) store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const openStore = () => {
    const store = new NodeStateStore(path.join(dir, "state.sqlite"));
    stores.push(store);
    return store;
  };

  /** Runs passes as the node's loop does while one says blocks are left; returns the batches sent. */
  async function setUp(overrides: Partial<JobRunnerOptions> & { readers?: SourceReaders; store?: NodeStateStore } = {}) {
    const context = await loadFixture(fixture);
    const store = overrides.store ?? openStore();
    const sender = new RecordingSender(store, context.registry);
    const { logger, lines } = captureLogs();
    const options: JobRunnerOptions = {
      provider: ethers.provider,
      registry: context.registry,
      registryAddress: await context.registry.getAddress(),
      readers: fakeReaders(),
      store,
      sender,
      operator: context.nodes[0].burner.address,
      licenses: () => [context.nodes[0].licenseId],
      maxSubmissionsPerTx: 16,
      maxGasPerTx: 8_000_000n,
      confirmations: 0,
      logBlockRange: 1_000,
      maxJobsPerPass: 200,
      logger,
      ...overrides,
    };
    const pass = () => runJobPass(options, async () => context.startBlock);
    const request = async (holder = HOLDER) => {
      await context.registry.connect(context.consumer).requestEvmBalance(holder, TOKEN);
      return (await context.registry.nextJobId()) - 1n;
    };
    return { ...context, store, sender, options, pass, request, logs: lines };
  }

  it("answers each open job once, in batches of at most MAX_SUBMISSIONS_PER_TX, and moves the cursor past them", async function () {
    const { pass, request, sender, store } = await setUp({ maxSubmissionsPerTx: 2 });
    const jobs = [await request(), await request(), await request(), await request(), await request()];
    expect(await pass()).to.equal(false);
    const [first] = sender.batches;
    expect(sender.take()).to.deep.equal([jobs.slice(0, 2), jobs.slice(2, 4), jobs.slice(4)]);
    expect(store.cursor()).to.equal(await ethers.provider.getBlockNumber());
    for (const jobId of jobs) expect(store.votesFor(jobId)).to.deep.equal([1n]);
    // Each submission carries the source's answer, with the job's owner and asset as its request names them.
    const [submission] = first.submissions;
    expect([submission.licenseIds, submission.balance, submission.queryResultHash]).to.deep.equal([
      [1n],
      BALANCE,
      queryResultHash(balanceWord(BALANCE)),
    ]);
    expect([submission.owner, submission.asset]).to.deep.equal([
      addressToBytes32(HOLDER).toLowerCase(),
      addressToBytes32(TOKEN).toLowerCase(),
    ]);

    expect(await pass()).to.equal(false);
    expect(sender.take()).to.deep.equal([]);
    const later = await request();
    await pass();
    expect(sender.take()).to.deep.equal([[later]]);
  });

  it("commits to its answers, then reveals them in the next pass, from the journal, even after a restart", async function () {
    const { pass, request, sender, store, registry, nodes, options } = await setUp();
    const job = await request();
    await pass();
    const [batch] = sender.batches.splice(0);
    expect(sender.reveals).to.deep.equal([]);
    // The commitment is the registry's own for the reveal journaled with it, bound to this burner.
    const [commitment] = registry.interface.decodeFunctionData("commitResults", batch.data);
    const burner = nodes[0].burner;
    expect(commitment).to.equal(
      await registry.revealCommitment(burner.address, ethers.dataSlice(batch.revealData, 4, 36), ethers.dataSlice(batch.revealData, 36)),
    );
    // A restart before the next pass: the journal still holds the reveal, which the next pass sends, once.
    store.close();
    stores = [];
    const restarted = openStore();
    const again = new RecordingSender(restarted, registry);
    await runJobPass({ ...options, store: restarted, sender: again }, async () => 0);
    expect(again.reveals.map((reveal) => reveal.data)).to.deep.equal([batch.revealData]);
    // The reveal is the vote that may finalize: it carries the finalization allowance, the commit none.
    expect(again.reveals[0].extraGas).to.equal(batch.extraGas);
    expect(batch.extraGas).to.be.above(0n);
    await runJobPass({ ...options, store: restarted, sender: again }, async () => 0);
    expect(again.reveals).to.have.length(1);
    expect(again.take()).to.deep.equal([]);
    // Sent as the node sends them, commit then reveal: the reveal casts the vote and names the commitment.
    await (await burner.sendTransaction({ to: options.registryAddress, data: batch.data })).wait();
    const receipt = await (await burner.sendTransaction({ to: options.registryAddress, data: batch.revealData })).wait();
    expect(await registry.hasVoted(job, 1n)).to.equal(true);
    const revealed = receipt!.logs.map((log) => registry.interface.parseLog(log)).find((log) => log?.name === "ResultsRevealed");
    expect(revealed?.args.commitment).to.equal(commitment);
  });

  it("keeps its cursor across a restart: a new journal on the same file answers only the jobs requested since", async function () {
    const first = await setUp();
    const before = [await first.request(), await first.request()];
    await first.pass();
    expect(first.sender.take()).to.deep.equal([before]);
    const cursor = first.store.cursor();
    first.store.close();
    stores = [];

    const after = await first.request();
    const restarted = openStore();
    expect(restarted.cursor()).to.equal(cursor);
    const sender = new RecordingSender(restarted, first.registry);
    await runJobPass({ ...first.options, store: restarted, sender }, async () => first.startBlock);
    expect(sender.take()).to.deep.equal([[after]]);

    // Even scanned again from the start, the journal's votes keep the earlier jobs from a second vote.
    restarted.setCursor(first.startBlock - 1);
    await runJobPass({ ...first.options, store: restarted, sender }, async () => first.startBlock);
    expect(sender.take()).to.deep.equal([]);
  });

  it("leaves alone the jobs its license voted on-chain, even with an empty journal", async function () {
    const { pass, request, sender, options, nodes } = await setUp();
    const jobs = [await request(), await request()];
    await pass();
    const [batch] = sender.batches.splice(0);
    expect(batch.jobs).to.deep.equal(jobs);
    await (await nodes[0].burner.sendTransaction({ to: options.registryAddress, data: batch.revealData })).wait();
    expect(await options.registry.hasVoted(jobs[0], 1n)).to.equal(true);

    const empty = new NodeStateStore(":memory:");
    stores.push(empty);
    const fresh = new RecordingSender(empty, options.registry);
    await runJobPass({ ...options, store: empty, sender: fresh }, async () => 0);
    expect(fresh.take()).to.deep.equal([]);
  });

  it("on a rescan request, answers again the votes a lost transaction forgot, and only those", async function () {
    const { pass, request, sender, store } = await setUp({ maxSubmissionsPerTx: 1 });
    const jobs = [await request(), await request(), await request()];
    await pass();
    const sent = sender.batches.splice(0);
    expect(sent.map((batch) => batch.jobs)).to.deep.equal(jobs.map((jobId) => [jobId]));
    const head = store.cursor();

    // The second job's transaction reverted: TxSender forgets its votes and the node asks for a rescan.
    const rescanFrom = store.forgetTx(sent[1].id, "reverted");
    expect(rescanFrom).to.equal(sent[1].votes[0].jobBlock);
    store.requestRescan(rescanFrom!);
    await pass();
    expect(sender.take()).to.deep.equal([[jobs[1]]]);
    expect(store.cursor()).to.equal(head);
    expect(store.takeRescan()).to.equal(undefined); // applied once
    await pass();
    expect(sender.take()).to.deep.equal([]);
  });

  it("cuts a batch when the next submission would take it past MAX_GAS_PER_TX, counting each job's finalization gas", async function () {
    // A vote without callback counts 60k + 612k (the finalization of up to 16 votes): two fit in 1.4M,
    // three do not. One with a 500k callback counts 500k + 1/63 + 50k more: it fits with no other.
    const { pass, request, sender, registry, consumer } = await setUp({ maxGasPerTx: 1_400_000n });
    const plain = await request();
    await registry.connect(consumer).setCallbackGasLimit(500_000n);
    const withCallback = await request();
    await registry.connect(consumer).setCallbackGasLimit(0n);
    const [third, fourth, fifth] = [await request(), await request(), await request()];
    await pass();
    const sent = sender.batches.splice(0);
    expect(sent.map((batch) => batch.jobs)).to.deep.equal([[plain], [withCallback], [third, fourth], [fifth]]);
    const gasOf = async (jobId: bigint) => finalizationGasOf(await registry.getJob(jobId));
    expect(120_000n + (await gasOf(plain)) + (await gasOf(withCallback))).to.be.greaterThan(1_400_000n);
    expect(sent[1].extraGas).to.equal(await gasOf(withCallback));
    expect(sent[2].extraGas).to.equal((await gasOf(third)) + (await gasOf(fourth)));
  });

  it("keeps the cursor before a job whose read or submission failed, and answers it on the next pass", async function () {
    const failing = new Set<string>([OTHER_HOLDER.toLowerCase()]);
    const { pass, request, sender, store, registry } = await setUp({ readers: fakeReaders(failing) });
    const readable = await request(HOLDER);
    const unreadable = await request(OTHER_HOLDER);
    const blockOf = async (jobId: bigint) => (await registry.queryFilter(registry.filters.VerificationRequested(jobId)))[0].blockNumber;
    await pass();
    expect(sender.take()).to.deep.equal([[readable]]);
    expect(store.cursor()).to.equal((await blockOf(unreadable)) - 1);

    failing.clear();
    sender.failNext = true; // the source answers now, but the submission fails: the block stays to be scanned
    await pass();
    expect(sender.take()).to.deep.equal([]);
    expect(store.cursor()).to.equal((await blockOf(unreadable)) - 1);
    await pass();
    expect(sender.take()).to.deep.equal([[unreadable]]);
    expect(store.cursor()).to.equal(await ethers.provider.getBlockNumber());
  });

  it("answers at most MAX_JOBS_PER_PASS jobs per pass, stopping the cursor at a block boundary, and says more are left", async function () {
    const { pass, request, sender, store } = await setUp({ maxJobsPerPass: 2 });
    const jobs = [await request(), await request(), await request()];
    expect(await pass()).to.equal(true);
    expect(sender.take()).to.deep.equal([jobs.slice(0, 2)]);
    expect(await pass()).to.equal(false);
    expect(sender.take()).to.deep.equal([[jobs[2]]]);
    expect(store.cursor()).to.equal(await ethers.provider.getBlockNumber());
  });

  it("withdraws a reveal whose Ethereum block was reorged away, and answers its job again on the canonical chain", async function () {
    // The Ethereum source is a real anvil that reorganizes; the jobs are on this test's chain, as the L2's are.
    const anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage });
    const source = devnetProvider(anvil.rpcUrl, 1);
    try {
      await installMulticall3(source);
      const holder = new Wallet(devAccount(1).privateKey);
      const artifact = await hre.artifacts.readArtifact("PlainERC20");
      const deployer = new Wallet(devAccount(0).privateKey, source);
      const token = (await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(holder.address, 1_000n)) as Contract;
      const asset = await token.getAddress();
      await source.send("anvil_mine", ["0x5"]); // the token's blocks stay below the reorg's depth
      const reads = new HashPinnedEvmReads(new JsonRpcPool({ urls: [anvil.rpcUrl], timeoutMs: 5_000 }), { headTtlMs: 0 });
      const { pass, sender, store, registry, consumer, logs } = await setUp({
        readers: { ...fakeReaders(), evm: reads },
        canonical: reads,
      });
      await registry.connect(consumer).requestEvmBalance(holder.address, asset);
      const job = (await registry.nextJobId()) - 1n;

      await pass();
      const [committed] = sender.batches.splice(0);
      expect(committed.submissions.map((submission) => submission.balance)).to.deep.equal([1_000n]);
      expect(sender.reveals).to.deep.equal([]);

      // Ethereum replaces its last three blocks, the one read among them, with blocks moving 400 away.
      const transfer = token.interface.encodeFunctionData("transfer", [Wallet.createRandom().address, 400n]);
      await source.send("anvil_reorg", [3, [[{ from: holder.address, to: asset, data: transfer }, 0]]]);

      // The reveal of the answer read at the replaced block is never sent; the job is read again and committed anew.
      await pass();
      expect(sender.reveals).to.deep.equal([]);
      const [again] = sender.batches.splice(0);
      expect(again.jobs).to.deep.equal([job]);
      expect(again.submissions.map((submission) => submission.balance)).to.deep.equal([600n]);
      expect(store.votesFor(job)).to.deep.equal([1n]);
      expect(logs.some((line) => /reorged away/.test(String(line.msg)))).to.equal(true);

      // Its block is canonical: the next pass reveals it, once.
      await pass();
      expect(sender.reveals.map((reveal) => reveal.data)).to.deep.equal([again.revealData]);
    } finally {
      source.destroy();
      await anvil.stop();
    }
  });
});
