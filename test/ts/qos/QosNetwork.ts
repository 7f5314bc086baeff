import path from "node:path";

import { expect } from "chai";
import { formatUnits, NonceManager, Wallet, WebSocketProvider, type Block, type JsonRpcProvider } from "ethers";

import {
  NodeRegistry__factory,
  PrimaryToken__factory,
  RewardPools__factory,
  StakedToken__factory,
  VerificationRegistry__factory,
} from "../../../typechain-types/index.ts";
import { CHALLENGER_ROLE } from "@avn/protocol/qos";
import { NetworkService, toNetworkNode, type NetworkNode } from "../../../src/api/network/network-service.ts";
import { EpochSettlements } from "../../../src/chains/evm/epoch-settlement.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { bridgePrimaryTokens } from "../../../src/devnet/network-setup.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { NETWORK_ACCOUNTS, startVerificationNetwork, type VerificationNetwork } from "../../../src/devnet/verification-network.ts";
import { E18 } from "@avn/protocol/units";
import { startTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { startSourceProxy, type SourceProxy } from "../../helpers/source-proxy.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

// Issue 47's bar, end to end: four circuit nodes, each its own process, on an OP devnet whose epoch holds 30
// liveness windows. Seconds of L2 time (1 s blocks).
const LIVENESS_WINDOW = 5;
const WINDOWS = 30;
const EPOCH = LIVENESS_WINDOW * WINDOWS;
/** A third of the epoch and one window more: at least ten whole windows without a heartbeat, uptime ≤ 20/30. */
const PAUSE_FROM = EPOCH / 3;
const PAUSE_FOR = EPOCH / 3 + LIVENESS_WINDOW;
/**
 * The late node's source answers once the L2 has mined this many blocks since it was asked (10 s at 1-s
 * blocks): its commitments come after the others' reveals, a block or two after the request.
 */
const LATE_SOURCE_BLOCKS = 10;
/** The consumer asks for a balance every this many L2 blocks, through the epoch. */
const REQUEST_EVERY_BLOCKS = 3;
/** What the test adds to the measured epoch's pool. */
const TEST_POOL = 1_000n * E18;
/** Explicit gas for requests, as the demo's (src/devnet/demo-verify.ts says why). */
const REQUEST_GAS_LIMIT = 400_000n;

const BEHAVIOURS = ["honest", "paused", "late", "wrong"] as const;
type Behaviour = (typeof BEHAVIOURS)[number];

describe("quality of service end to end: four node processes, an epoch of 30 windows, paid by score", function () {
  this.timeout(900_000);
  let test: TestDevnet | undefined;
  let network: VerificationNetwork | undefined;
  const proxies: SourceProxy[] = [];
  let l2: JsonRpcProvider | undefined;
  let heads: WebSocketProvider | undefined;
  /** Each behaviour's license, its figures for the epoch, and what its owner claimed. */
  const results = new Map<Behaviour, { licenseId: bigint; figures: NetworkNode; reward: bigint }>();
  let pool = 0n;

  before(async function () {
    test = await startTestDevnet({
      deploy: true,
      l2BlockTime: 1,
      l2Parameters: {
        epochDuration: BigInt(EPOCH),
        livenessWindow: BigInt(LIVENESS_WINDOW),
        // The settlement opens 4 s after the epoch; claims 4 s after a root is accepted.
        settlementDelay: 4n,
        disputePeriod: 4n,
      },
    });
    const { devnet, deployment } = test;
    const contracts = deployment!.l2;
    l2 = devnetProvider(devnet.l2.rpcUrl, devnet.l2.chainId);
    // The deployer still holds the admin role (governance has not accepted it on a test devnet): it names
    // the challenger, as governance does on `npm start`.
    const deployer = new NonceManager(new Wallet(devnet.accounts.deployer.privateKey, l2));
    await (
      await NodeRegistry__factory.connect(contracts.NodeRegistry, deployer).grantRole(
        CHALLENGER_ROLE,
        devAccount(NETWORK_ACCOUNTS.challenger).address,
      )
    ).wait();
    // The late node reads its EVM source through a slow front, the wrong one through a lying one. The L2's
    // new heads drive both the front's hold and the test's epoch below.
    heads = new WebSocketProvider(devnet.l2.wsUrl, devnet.l2.chainId);
    const l2Heads = heads;
    const late = await startSourceProxy({ upstreamUrl: devnet.l1.rpcUrl, holdCalls: () => blocksLater(l2Heads, LATE_SOURCE_BLOCKS) });
    const wrong = await startSourceProxy({ upstreamUrl: devnet.l1.rpcUrl, lie: true });
    proxies.push(late, wrong);
    const { adminHandovers: _none, ...l2Contracts } = contracts;
    network = await startVerificationNetwork({
      projectRoot,
      workDir: path.join(test.stateDir, "qos-network"),
      l1: devnet.l1,
      l2: devnet.l2,
      deployer: devnet.accounts.deployer,
      contracts: { l1PrimaryToken: deployment!.l1PrimaryToken, l1StandardBridge: devnet.l1Contracts.L1StandardBridge, l2: l2Contracts },
      apiPort: 0,
      nodeCount: BEHAVIOURS.length,
      // A beat every 2 s in 5-s windows; the rewards root is voted at the same pace.
      nodeEnv: { HEARTBEAT_INTERVAL_SECONDS: "2", POLL_INTERVAL_MS: "500" },
      // The late node waits for its slow source (past the 5-s default, after which it would not answer at all).
      nodeEnvs: [undefined, undefined, { EVM_RPC_URLS: late.url, UPSTREAM_TIMEOUT_MS: "30000" }, { EVM_RPC_URLS: wrong.url }],
      // Only EVM challenges: the wrong node lies about EVM balances, so it is wrong on every job.
      challenger: { meanIntervalSeconds: 15, chains: ["evm"] },
      onProgress: () => undefined,
    });
    const registry = VerificationRegistry__factory.connect(contracts.VerificationRegistry, l2);
    const rewardPools = RewardPools__factory.connect(contracts.RewardPools, l2);

    // The measured epoch's pool: what the stack's setup funded (the epoch of its start and the next three, so
    // this one when the setup took less than two epochs), and 1,000 tokens of the test's own, bridged to the
    // deployer (the rewards funder) now and funded once the epoch is known, whatever the setup took.
    const l1 = devnetProvider(devnet.l1.rpcUrl, devnet.l1.chainId);
    await bridgePrimaryTokens(
      {
        l1,
        l2,
        deployer: devnet.accounts.deployer,
        contracts: { l1PrimaryToken: deployment!.l1PrimaryToken, l1StandardBridge: devnet.l1Contracts.L1StandardBridge, l2: contracts },
      },
      [{ to: devnet.accounts.deployer.address, amount: TEST_POOL }],
    ).finally(() => l1.destroy());
    // A signer of its own: the network's setup sent the deployer's transactions since the grant above.
    const funder = new NonceManager(new Wallet(devnet.accounts.deployer.privateKey, l2));
    await (await PrimaryToken__factory.connect(contracts.PrimaryToken, funder).approve(contracts.RewardPools, TEST_POOL)).wait();

    // The epoch to measure is the next one. The L2's clock is moved to 15 s before it starts, rather than
    // waiting up to a whole epoch for it: the nodes beat again in those 15 s, and the epoch runs in real time.
    const epochsStart = Number(await registry.EPOCHS_START());
    const now = (await l2.getBlock("latest"))!.timestamp;
    const epoch = Math.floor((now - epochsStart) / EPOCH) + 1;
    const epochStart = epochsStart + epoch * EPOCH;
    const lead = 3 * LIVENESS_WINDOW;
    if (epochStart - now > lead) await l2.send("evm_increaseTime", [epochStart - now - lead]);

    await (await RewardPools__factory.connect(contracts.RewardPools, funder).fundEpochRewards(epoch, TEST_POOL)).wait();
    pool = (await rewardPools.settlementOf(epoch)).pool;

    // Through the epoch, block by block: a job every few blocks, and the second node paused for a third.
    const consumer = VerificationRegistry__factory.connect(
      contracts.VerificationRegistry,
      new NonceManager(new Wallet(devAccount(NETWORK_ACCOUNTS.consumer).privateKey, l2)),
    );
    const holder = devAccount(NETWORK_ACCOUNTS.demoHolder).address;
    const paused = network.nodes[1];
    let pauseStarted = false;
    const requests: Array<Promise<unknown>> = [];
    let blocks = 0;
    try {
      await untilBlock(heads, async (block) => {
        const at = block.timestamp - epochStart;
        if (at >= PAUSE_FROM && !pauseStarted) {
          pauseStarted = true;
          paused.child.kill("SIGSTOP");
        }
        if (at >= PAUSE_FROM + PAUSE_FOR) paused.child.kill("SIGCONT");
        if (at >= EPOCH) return true;
        // Each request settles into the list (a failure is reported below, with the others' outcome).
        if (at >= 0 && blocks++ % REQUEST_EVERY_BLOCKS === 0)
          requests.push(
            consumer
              .requestEvmBalance(holder, network!.evmDemo.erc20, { gasLimit: REQUEST_GAS_LIMIT })
              .then((tx) => tx.wait())
              .catch((error: unknown) => error),
          );
        return undefined;
      });
    } finally {
      // Resumed whatever happened: a stopped process would never end at the network's stop.
      paused.child.kill("SIGCONT");
    }
    const failed = (await Promise.all(requests)).filter((outcome) => outcome instanceof Error);
    expect(failed, "requests that failed").to.deep.equal([]);

    // The nodes vote the epoch's rewards root once its settlement opens; it is accepted at the quorum.
    // Voting stays open for an epoch: a root not accepted by then fails the test there, with the votes cast.
    const settlement = await untilBlock(heads, async (block) => {
      const state = await rewardPools.settlementOf(epoch);
      if (state.accepted) return state;
      if (block.timestamp >= Number(state.votingClosesAt)) {
        const votes = await rewardPools.queryFilter(rewardPools.filters.RewardsRootVoted(epoch));
        throw new Error(
          `epoch ${epoch}'s voting closed without a root accepted; votes: ${JSON.stringify(votes.map((vote) => vote.args.map(String)))}`,
        );
      }
      return undefined;
    });
    await untilBlock(heads, async (block) => (block.timestamp >= Number(settlement.claimsOpenAt) ? true : undefined));

    // Each owner claims what the accepted root gives its license, with the proof any reader can compute.
    const { tree } = await new EpochSettlements({ request: (method, params) => l2!.send(method, params) }, contracts.RewardPools).rewards(
      epoch,
    );
    expect(tree.root).to.equal(settlement.root);
    const service = new NetworkService({
      l2: { request: (method, params) => l2!.send(method, params) },
      verificationRegistry: contracts.VerificationRegistry,
      keepAllEvents: true,
    });
    const figures = (await service.pastEpoch(epoch)).byLicense;
    const staked = StakedToken__factory.connect(contracts.StakedToken, l2);
    for (const [index, behaviour] of BEHAVIOURS.entries()) {
      const licenseId = BigInt(network.stack.nodes![index].licenseIds[0]);
      const owner = devAccount(NETWORK_ACCOUNTS.nodeOwners[index]);
      const payout = tree.proofOf(licenseId);
      let reward = 0n;
      if (payout !== undefined) {
        const before = await staked.balanceOf(owner.address);
        await (
          await RewardPools__factory.connect(contracts.RewardPools, new Wallet(owner.privateKey, l2)).claimRewards([
            { epoch, licenseId, amount: payout.amount, proof: payout.proof },
          ])
        ).wait();
        reward = (await staked.balanceOf(owner.address)) - before;
      }
      results.set(behaviour, { licenseId, figures: toNetworkNode(figures.get(licenseId)!), reward });
    }
    console.log(`      epoch ${epoch}: ${WINDOWS} windows of ${LIVENESS_WINDOW} s, pool ${formatUnits(pool, 18)}`);
    console.log(
      "      | license | behaviour | uptime | participation | accuracy | median delay | challenges | agreed | points | score | reward |",
    );
    for (const [behaviour, { licenseId, figures: node, reward }] of results)
      console.log(
        `      | ${licenseId} | ${behaviour} | ${node.uptimeBps} | ${node.participationBps} | ${node.accuracyBps} | ${node.medianVoteDelayBlocks} | ${node.challengeJobsAnswered}/${node.challengeJobsAsked} | ${node.agreed} | ${node.points} | ${node.scoreBps} | ${formatUnits(reward, 18)} |`,
      );
  });

  after(async function () {
    this.timeout(120_000);
    // A failure during the pause leaves the node stopped, and a stopped process never ends on SIGTERM.
    network?.nodes[1]?.child.kill("SIGCONT");
    // The nodes and their sources stop before the heads' socket: the late node's held calls subscribe to new
    // heads, and a subscription still being made when the socket is destroyed fails.
    await network?.stop();
    for (const proxy of proxies) await proxy.stop();
    await heads?.destroy();
    l2?.destroy();
    await test?.stop();
  });

  const of = (behaviour: Behaviour) => results.get(behaviour)!;

  it("pays the honest node the largest reward", function () {
    for (const other of ["paused", "late", "wrong"] as const) expect(of("honest").reward, other).to.be.above(of(other).reward);
  });

  it("measures the paused node's uptime below 70%, and scores it below the honest one", function () {
    expect(of("paused").figures.uptimeBps).to.be.below(7_000);
    expect(of("paused").figures.scoreBps).to.be.below(of("honest").figures.scoreBps);
  });

  it("gives the late node no points: its commitments came after the answer was public", function () {
    expect(of("late").figures.medianVoteDelayBlocks).to.be.above(of("honest").figures.medianVoteDelayBlocks);
    expect(of("late").figures.points).to.equal(0);
    expect(of("late").reward).to.equal(0n);
  });

  it("pays the wrong node nothing: it disagreed on every job it answered", function () {
    expect(of("wrong").figures.disagreed).to.be.at.least(2);
    expect(of("wrong").figures.agreed).to.equal(0);
    expect(of("wrong").figures.scoreBps).to.equal(0);
    expect(of("wrong").reward).to.equal(0n);
  });

  it("pays out no more than the epoch's pool", function () {
    const paid = [...results.values()].reduce((sum, { reward }) => sum + reward, 0n);
    expect(paid).to.be.above(0n);
    expect(paid).to.be.at.most(pool);
  });
});

/** Resolves once `heads` has reported `count` new blocks. */
function blocksLater(heads: WebSocketProvider, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const onBlock = () => {
      if (++seen < count) return;
      void heads.off("block", onBlock);
      resolve();
    };
    heads.on("block", onBlock).catch(reject);
  });
}

/**
 * Calls `read` with each new L2 block (one call at a time, in order: a block that comes during a call is read
 * after it, the latest one only) until it gives a value, or throws.
 */
async function untilBlock<T>(heads: WebSocketProvider, read: (block: Block) => Promise<T | undefined>): Promise<T> {
  return await new Promise<T>((resolve, reject) => {
    let latest: number | undefined;
    let reading = false;
    let done = false;
    const finish = (outcome: () => void) => {
      done = true;
      void heads.off("block", onBlock);
      outcome();
    };
    const next = async () => {
      while (!done && latest !== undefined) {
        const number = latest;
        latest = undefined;
        const block = await heads.getBlock(number);
        if (block === null) continue;
        const value = await read(block);
        if (value !== undefined) finish(() => resolve(value));
      }
    };
    const onBlock = (number: number) => {
      latest = number;
      if (reading) return;
      reading = true;
      next().then(
        () => (reading = false),
        (error: unknown) => finish(() => reject(error instanceof Error ? error : new Error(String(error)))),
      );
    };
    heads.on("block", onBlock).catch((error: unknown) => finish(() => reject(error instanceof Error ? error : new Error(String(error)))));
  });
}
