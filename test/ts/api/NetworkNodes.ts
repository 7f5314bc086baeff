import { expect } from "chai";

import { formatUnits, ZeroHash, zeroPadValue } from "ethers";

import { CHALLENGER_ROLE } from "@avn/protocol/qos";
import { epochPayouts } from "@avn/protocol/rewards";

import { NetworkService } from "../../../src/api/network/network-service.ts";
import { EpochSettlements } from "../../../src/chains/evm/epoch-settlement.ts";
import { E18 } from "@avn/protocol/units";
import { runQosCli } from "../../../src/api/network/qos-cli.ts";
import type { NetworkNode, NetworkNodes } from "../../../src/api/network/network-service.ts";
import { LIVENESS_WINDOW } from "../../helpers/protocol.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import {
  commitAndReveal,
  ethers,
  fixture,
  HOLDER,
  loadFixture,
  submission,
  submit,
  time,
  TOKEN,
} from "../contracts/verification-registry/fixture.ts";

// No source chain is read by these routes: the readers point at a port nothing listens on.
const NO_SOURCES = { anvil: { rpcUrl: "http://127.0.0.1:9" }, solanaRpc: { url: "http://127.0.0.1:9" } } as never;
const W = Number(LIVENESS_WINDOW);
const RIGHT = 5n;
const WRONG = 7n;

/**
 * GET /api/network/nodes over the real registries (Hardhat's in-process chain) and a real HTTP server:
 * ten liveness windows of one epoch, a job each, three licenses that behave differently, each figure
 * checked against what the scenario makes it.
 */
describe("API: GET /api/network/nodes, each license's quality of service from the chain", function () {
  const l2 = { request: <T>(method: string, params: unknown[]) => ethers.provider.send(method, params) as Promise<T> };
  let api: TestApi | undefined;

  afterEach(async function () {
    await api?.close();
    api = undefined;
  });

  const get = async (path = "/api/network/nodes", key = api!.apiKey) => {
    const response = await fetch(`${api!.baseUrl}${path}`, { headers: key === "" ? {} : { authorization: key } });
    return { status: response.status, body: (await response.json()) as NetworkNodes & { message?: string } };
  };
  const byLicense = (body: NetworkNodes, licenseId: number): NetworkNode => body.nodes.find((node) => node.licenseId === licenseId)!;

  /**
   * From the start of the next epoch, ten windows. Every window: the burners beat (B only in windows 0 to
   * 5: then it stops), the consumer opens one job, C answers wrong, A right, B right (but not in window 5,
   * while still live). A and B finalize the jobs of windows 0 to 4; the later ones stay open.
   */
  async function tenWindows() {
    const context = await loadFixture(fixture);
    const { registry, nodeRegistry, consumer, burnerA, burnerB, burnerC } = context;
    const start =
      Number(await registry.EPOCHS_START()) + (Number(await registry.currentEpoch()) + 1) * Number(await registry.EPOCH_DURATION());
    const epoch = Number(await registry.currentEpoch()) + 1;
    for (let window = 0; window < 10; window++) {
      await time.increaseTo(start + window * W + 10);
      await nodeRegistry.connect(burnerA)["heartbeat()"]();
      if (window <= 5) await nodeRegistry.connect(burnerB)["heartbeat()"]();
      await nodeRegistry.connect(burnerC)["heartbeat()"]();
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      const jobId = (await registry.nextJobId()) - 1n;
      await submit(registry, burnerC, jobId, [3n], WRONG);
      await submit(registry, burnerA, jobId, [1n], RIGHT);
      if (window < 5) await submit(registry, burnerB, jobId, [2n], RIGHT);
    }
    await time.increaseTo(start + 10 * W + 5);
    await ethers.provider.send("evm_mine", []);
    return { ...context, start, epoch };
  }

  it("publishes uptime, participation, accuracy, delay and score as the chain recorded them, as JSON integers", async function () {
    const { registry, start, epoch, admin, outsider, consumer, burnerA, burnerC } = await tenWindows();
    // An attested answer recorded on-chain (through the registry's entry for its attestation verifier),
    // signed by A's and C's licenses: counted for each of them, not for B.
    await registry.connect(admin).grantRole(await registry.ATTESTATION_ROLE(), outsider.address);
    const attested = { chain: 0, owner: zeroPadValue(HOLDER, 32), asset: zeroPadValue(TOKEN, 32), balance: RIGHT, sourceBlock: 1n };
    await registry
      .connect(outsider)
      .recordAttestedResult(consumer.address, { ...attested, queryResultHash: ZeroHash, issuedAt: await time.latest() }, [1n, 3n]);
    const network = new NetworkService({ l2, verificationRegistry: await registry.getAddress() });
    api = await startTestApi(NO_SOURCES, { network });
    api.metrics.publishNetwork(network);
    const { status, body } = await get();
    expect(status).to.equal(200);
    expect(body.epoch).to.equal(epoch);
    expect(body.epochEndsAt).to.equal(start + Number(await registry.EPOCH_DURATION()));
    expect(body.nodes.map((node) => node.licenseId)).to.deep.equal([1, 2, 3]);

    // A: a beat in every window, a right answer to every job, two blocks after the request.
    expect(byLicense(body, 1)).to.deep.equal({
      licenseId: 1,
      operator: burnerA.address.toLowerCase(),
      live: true,
      uptimeBps: 10_000,
      participationBps: 10_000,
      accuracyBps: 10_000,
      medianVoteDelayBlocks: 2,
      scoreBps: 10_000,
      jobsAsked: 10,
      votes: 10,
      agreed: 5,
      points: 0,
      disagreed: 0,
      challengeJobsAsked: 0,
      challengeJobsAnswered: 0,
      challengeMedianVoteDelayBlocks: 0,
      attestations: 1,
    });
    // B: beats in 6 windows of 10; live for the jobs of windows 0 to 5, it answered 5 of those 6; its votes
    // came three blocks after the request (still on time). Score: 0.6 × 0.8333 × 1 × 1.
    const b = byLicense(body, 2);
    expect({ ...b, operator: undefined }).to.deep.equal({
      licenseId: 2,
      operator: undefined,
      live: false,
      uptimeBps: 6_000,
      participationBps: 8_333,
      accuracyBps: 10_000,
      medianVoteDelayBlocks: 3,
      scoreBps: 4_999,
      jobsAsked: 6,
      votes: 5,
      agreed: 5,
      points: 0,
      disagreed: 0,
      challengeJobsAsked: 0,
      challengeJobsAnswered: 0,
      challengeMedianVoteDelayBlocks: 0,
      attestations: 0,
    });
    // The same figures on /metrics, for Prometheus.
    const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
    expect(metrics).to.contain('api_network_license_score_bps{license="2"} 4999');
    expect(metrics).to.contain('api_network_license_uptime_bps{license="2"} 6000');
    expect(metrics).to.contain(`api_network_epoch ${epoch}`);
    // C: always there and first, always wrong: 5 wrong answers on finalized jobs; nothing for the epoch.
    expect(byLicense(body, 3)).to.deep.equal({
      licenseId: 3,
      operator: burnerC.address.toLowerCase(),
      live: true,
      uptimeBps: 10_000,
      participationBps: 10_000,
      accuracyBps: 0,
      medianVoteDelayBlocks: 1,
      scoreBps: 0,
      jobsAsked: 10,
      votes: 10,
      agreed: 0,
      points: 0,
      disagreed: 5,
      challengeJobsAsked: 0,
      challengeJobsAnswered: 0,
      challengeMedianVoteDelayBlocks: 0,
      attestations: 1,
    });
  });

  it("ranks and pays four behaviours over 36 windows with challenges: honest first, paused a third below 70% uptime, late lower, wrong 0", async function () {
    const {
      registry,
      rewardPools,
      staked,
      nodeRegistry,
      license,
      admin,
      consumer,
      outsider,
      alice,
      bob,
      carol,
      burnerA,
      burnerB,
      burnerC,
    } = await loadFixture(fixture);
    const burnerD = (await ethers.getSigners())[11];
    // A fourth license and node; quorum 3 of the four, so the late node's vote is needed while all are live.
    await license.connect(outsider).buy(1n, ethers.MaxUint256);
    await nodeRegistry.connect(outsider).delegate([4n], burnerD.address);
    await nodeRegistry.connect(admin).setQuorum(3n);
    await nodeRegistry.connect(admin).grantRole(CHALLENGER_ROLE, outsider.address);
    await registry.connect(outsider).stakeCollateral(outsider.address, 1_000n * E18);
    const [honest, paused, late, wrong] = [
      { burner: burnerA, licenseId: 1n, owner: alice },
      { burner: burnerB, licenseId: 2n, owner: bob },
      { burner: burnerD, licenseId: 4n, owner: outsider },
      { burner: burnerC, licenseId: 3n, owner: carol },
    ];
    const epoch = await registry.currentEpoch();
    const start = Number(await registry.EPOCHS_START()) + (Number(epoch) + 1) * Number(await registry.EPOCH_DURATION());
    const pool = 1_000n * E18;
    await rewardPools.connect(admin).fundEpochRewards(epoch + 1n, pool);
    const isPaused = (window: number) => window >= 12 && window < 24; // a third of the 36 windows
    for (let window = 0; window < 36; window++) {
      await time.increaseTo(start + window * W + 10);
      for (const node of [honest, late, wrong]) await nodeRegistry.connect(node.burner)["heartbeat()"]();
      if (!isPaused(window)) await nodeRegistry.connect(paused.burner)["heartbeat()"]();
      // One ordinary job each window, and a burst of two challenges every third.
      const requests = [() => registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN)];
      if (window % 3 === 0)
        for (let burst = 0; burst < 2; burst++) requests.push(() => registry.connect(outsider).requestEvmBalance(HOLDER, TOKEN));
      for (const request of requests) {
        await request();
        const jobId = (await registry.nextJobId()) - 1n;
        // The nodes vote as nodes do, by commit–reveal; the wrong one answers wrong.
        await commitAndReveal(registry, [
          { operator: wrong.burner, submissions: [submission(jobId, [wrong.licenseId], WRONG)] },
          { operator: honest.burner, submissions: [submission(jobId, [honest.licenseId], RIGHT)] },
          ...(isPaused(window) ? [] : [{ operator: paused.burner, submissions: [submission(jobId, [paused.licenseId], RIGHT)] }]),
        ]);
        // The late node answers four blocks after the others: its commitment comes after their reveals.
        for (let block = 0; block < 4; block++) await ethers.provider.send("evm_mine", []);
        await commitAndReveal(registry, [{ operator: late.burner, submissions: [submission(jobId, [late.licenseId], RIGHT)] }]);
      }
    }
    await time.increaseTo(start + 36 * W + 5);
    await ethers.provider.send("evm_mine", []);
    api = await startTestApi(NO_SOURCES, { network: new NetworkService({ l2, verificationRegistry: await registry.getAddress() }) });
    const { body } = await get();
    const figures = (node: { licenseId: bigint }) => byLicense(body, Number(node.licenseId));
    const rows = { honest: figures(honest), paused: figures(paused), late: figures(late), wrong: figures(wrong) };

    // The epoch's settlement, as the nodes run it: the tree from the chain, its root voted by a quorum (3),
    // accepted, and after the dispute period each owner's claim paid in staked tokens.
    const settlement = await rewardPools.settlementOf(epoch + 1n);
    await time.increaseTo(settlement.settlementOpensAt);
    for (const node of [honest, late, wrong]) await nodeRegistry.connect(node.burner)["heartbeat()"]();
    const { tree } = await new EpochSettlements(l2, await rewardPools.getAddress()).rewards(Number(epoch + 1n));
    for (const node of [honest, late, wrong])
      await rewardPools.connect(node.burner).voteRewardsRoot(epoch + 1n, tree.root, [node.licenseId]);
    await time.increase(await rewardPools.DISPUTE_PERIOD());
    const rewards = new Map<bigint, bigint>();
    for (const node of [honest, paused, late, wrong]) {
      const payout = tree.proofOf(node.licenseId);
      if (payout === undefined) {
        rewards.set(node.licenseId, 0n);
        continue;
      }
      const before = await staked.balanceOf(node.owner.address);
      await rewardPools
        .connect(node.owner)
        .claimRewards([{ epoch: epoch + 1n, licenseId: node.licenseId, amount: payout.amount, proof: payout.proof }]);
      rewards.set(node.licenseId, (await staked.balanceOf(node.owner.address)) - before);
    }
    console.log(
      "      | license | behaviour | uptime | participation | accuracy | median delay | challenges | agreed | points | score | reward |",
    );
    for (const [behaviour, node] of Object.entries(rows))
      console.log(
        `      | ${node.licenseId} | ${behaviour} | ${node.uptimeBps} | ${node.participationBps} | ${node.accuracyBps} | ${node.medianVoteDelayBlocks} | ${node.challengeJobsAnswered}/${node.challengeJobsAsked} | ${node.agreed} | ${node.points} | ${node.scoreBps} | ${formatUnits(rewards.get(BigInt(node.licenseId))!, 18)} |`,
      );
    const reward = (node: { licenseId: bigint }) => rewards.get(node.licenseId)!;
    expect(reward(honest)).to.be.above(reward(paused));
    expect(reward(paused)).to.be.above(0n);
    expect(reward(late)).to.equal(0n); // committed after the answer was out: no point
    expect(reward(wrong)).to.equal(0n); // two wrong answers or more: score 0
    expect([...rewards.values()].reduce((sum, amount) => sum + amount, 0n)).to.be.at.most(pool);
    expect(rows.honest.scoreBps).to.equal(10_000);
    for (const other of [rows.paused, rows.late, rows.wrong]) expect(other.scoreBps).to.be.below(rows.honest.scoreBps);
    expect(rows.paused.uptimeBps).to.be.below(7_000);
    expect(rows.wrong.scoreBps).to.equal(0);
    expect(rows.wrong.disagreed).to.be.at.least(2);
    expect(rows.late.medianVoteDelayBlocks).to.be.above(rows.honest.medianVoteDelayBlocks);
    expect(rows.honest.challengeJobsAnswered).to.equal(24);
  });

  it("lists a license whose delegation ended, and follows new votes on the next read", async function () {
    const { registry, nodeRegistry, license, consumer, alice, burnerA, burnerB } = await tenWindows();
    api = await startTestApi(NO_SOURCES, {
      network: new NetworkService({ l2, verificationRegistry: await registry.getAddress(), maxAgeMs: 0 }),
    });
    const before = byLicense((await get()).body, 1);

    // Alice's second license, delegated and beating, then undelegated: listed, not live, with its operator gone.
    await license.connect(alice).buy(1n, ethers.MaxUint256);
    await nodeRegistry.connect(alice).delegate([4n], burnerB.address);
    await nodeRegistry.connect(burnerB)["heartbeat()"]();
    await nodeRegistry.connect(alice).undelegate([4n]);
    // One more job, answered by A (which beats first: its last beat is a window old): it shows on the next read.
    await nodeRegistry.connect(burnerA)["heartbeat()"]();
    await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
    await submit(registry, burnerA, (await registry.nextJobId()) - 1n, [1n], RIGHT);

    const after = (await get()).body;
    expect(byLicense(after, 4)).to.include({ operator: null, live: false, jobsAsked: 0, votes: 0 });
    expect(byLicense(after, 1).votes).to.equal(before.votes + 1);
    expect(byLicense(after, 1).jobsAsked).to.equal(before.jobsAsked + 1);
  });

  it("measures capacity from the jobs of an account holding CHALLENGER_ROLE: asked, answered, and how fast", async function () {
    const { registry, nodeRegistry, admin, consumer, outsider, burnerA, burnerB } = await loadFixture(fixture);
    // Governance (the registry's admin) names the challenger; its jobs are otherwise ordinary jobs.
    await nodeRegistry.connect(admin).grantRole(CHALLENGER_ROLE, outsider.address);
    await registry.connect(outsider).stakeCollateral(outsider.address, 1_000n * E18);
    const firstChallenge = await registry.nextJobId();
    for (let burst = 0; burst < 3; burst++) await registry.connect(outsider).requestEvmBalance(HOLDER, TOKEN);
    await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
    const ordinary = firstChallenge + 3n;
    // A answers every challenge and the ordinary job; B answers the first challenge only; C none.
    for (const jobId of [firstChallenge, firstChallenge + 1n, firstChallenge + 2n, ordinary])
      await submit(registry, burnerA, jobId, [1n], RIGHT);
    await submit(registry, burnerB, firstChallenge, [2n], RIGHT);

    api = await startTestApi(NO_SOURCES, { network: new NetworkService({ l2, verificationRegistry: await registry.getAddress() }) });
    const { body } = await get();
    // Four requests, one block each, then the votes: each of A's came 4 blocks after its request, B's 8.
    expect(byLicense(body, 1)).to.include({
      jobsAsked: 4,
      challengeJobsAsked: 3,
      challengeJobsAnswered: 3,
      challengeMedianVoteDelayBlocks: 4,
    });
    expect(byLicense(body, 2)).to.include({
      jobsAsked: 4,
      challengeJobsAsked: 3,
      challengeJobsAnswered: 1,
      challengeMedianVoteDelayBlocks: 8,
    });
    expect(byLicense(body, 3)).to.include({
      jobsAsked: 4,
      challengeJobsAsked: 3,
      challengeJobsAnswered: 0,
      challengeMedianVoteDelayBlocks: 0,
    });
  });

  it("publishes the service as the nodes' reports measured it: each figure a median, one report per operator (GET /api/network/status)", async function () {
    const { registry, burnerA, burnerB, burnerC } = await loadFixture(fixture);
    const reports = await ethers.deployContract("QosReports", [await registry.getAddress()]);
    const network = new NetworkService({
      l2,
      verificationRegistry: await registry.getAddress(),
      qosReports: await reports.getAddress(),
      maxAgeMs: 0,
    });
    api = await startTestApi(NO_SOURCES, { network });
    const epoch = Number(await registry.currentEpoch());
    const before = await get("/api/network/status");
    expect(before.status).to.equal(200);
    expect(before.body).to.deep.equal({ epoch, reporters: 0, api: null, sources: null, peers: [] });

    type Peer = [licenseId: bigint, roundsObserved: number, roundsSigned: number, medianSigningMs: number];
    const report = (probes: number, correct: number, latency: number, lag: number, peerRounds = 0, peers: Peer[] = []) => ({
      epoch,
      apiProbes: probes,
      apiCorrect: correct,
      apiErrors: probes - correct,
      apiLatencyP50Ms: latency,
      apiLatencyP95Ms: latency * 3,
      evmSourceLatencyP50Ms: 5,
      svmSourceLatencyP50Ms: 7,
      evmHeadLagSeconds: lag,
      peerRounds,
      peers: peers.map(([licenseId, roundsObserved, roundsSigned, medianSigningMs]) => ({
        licenseId,
        roundsObserved,
        roundsSigned,
        medianSigningMs,
      })),
    });
    // A's first report is replaced by its later one; C lies (nothing correct, absurd latency): the medians hold.
    // Of the peers: C also lies that license 2 never signed and license 1 signs in 1 ms, and praises its own
    // license 3, which is left out; B saw only license 1.
    await reports.connect(burnerA).report(1n, report(4, 0, 10_000, 100, 3, [[2n, 3, 0, 0]]));
    await reports.connect(burnerA).report(
      1n,
      report(20, 20, 40, 2, 10, [
        [2n, 10, 10, 40],
        [3n, 10, 9, 60],
      ]),
    );
    await reports.connect(burnerB).report(2n, report(10, 9, 50, 3, 12, [[1n, 12, 12, 30]]));
    await reports.connect(burnerC).report(
      3n,
      report(10, 0, 99_999, 999, 10, [
        [1n, 10, 10, 1],
        [2n, 10, 0, 0],
        [3n, 10, 10, 1],
      ]),
    );
    const after = await get("/api/network/status");
    expect(after.body).to.deep.equal({
      epoch,
      reporters: 3,
      api: { probes: 40, correctBps: 9_000, errorBps: 1_000, latencyP50Ms: 50, latencyP95Ms: 150 },
      sources: { evmLatencyP50Ms: 5, svmLatencyP50Ms: 7, evmHeadLagSeconds: 3 },
      // With two reporters the lower figure is published, so C moves licenses 1 and 2 (docs/verification.md);
      // license 3 has one witness besides its own operator: counted, but no figure.
      peers: [
        { licenseId: 1, reporters: 2, roundsObserved: 10, signedBps: 10_000, medianSigningMs: 1 },
        { licenseId: 2, reporters: 2, roundsObserved: 10, signedBps: 0, medianSigningMs: 40 },
        { licenseId: 3, reporters: 1, roundsObserved: 10, signedBps: null, medianSigningMs: null },
      ],
    });
  });

  it("reads a range again, without counting anything twice, after a read that failed half-way", async function () {
    const { registry } = await tenWindows();
    const verificationRegistry = await registry.getAddress();
    let failures = 1;
    // The first header read of a block that opened jobs fails: the logs of its range were already read.
    const flaky = {
      request: <T>(method: string, params: unknown[]) =>
        method === "eth_getBlockByNumber" && params[0] !== "latest" && failures-- > 0
          ? Promise.reject(new Error("header read failed"))
          : l2.request<T>(method, params),
    };
    api = await startTestApi(NO_SOURCES, { network: new NetworkService({ l2: flaky, verificationRegistry, maxAgeMs: 0 }) });
    expect((await get()).status).to.equal(503);
    const again = await get();
    expect(again.status).to.equal(200);
    const clean = await new NetworkService({ l2, verificationRegistry }).nodes();
    expect(again.body.nodes).to.deep.equal(clean.nodes);
    expect(byLicense(again.body, 1)).to.include({ jobsAsked: 10, votes: 10, agreed: 5 });
  });

  it("npm run qos prints the same figures: one license with what its score is made of and earns, or all as the API's JSON", async function () {
    const { registry, rewardPools, admin, consumer, burnerA, burnerC, epoch: scenarioEpoch } = await tenWindows();
    const pool = 900n * E18;
    await rewardPools.connect(admin).fundEpochRewards(scenarioEpoch, pool);
    // One more job, which A and C (both still live) answer by commit–reveal, as the nodes vote: each earns a
    // point (its own answer, committed before any was revealed); B, no longer live, is not asked.
    await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
    const lastJob = (await registry.nextJobId()) - 1n;
    await commitAndReveal(registry, [
      { operator: burnerA, submissions: [submission(lastJob, [1n], RIGHT)] },
      { operator: burnerC, submissions: [submission(lastJob, [3n], RIGHT)] },
    ]);
    const target = {
      rpcUrl: "http://l2.invalid",
      verificationRegistry: await registry.getAddress(),
      rewardPools: await rewardPools.getAddress(),
    };
    const run = async (args: string[]) => {
      const lines: string[] = [];
      const errors: string[] = [];
      const code = await runQosCli(args, target, {
        print: (line) => lines.push(line),
        printError: (line) => errors.push(line),
        connect: () => l2,
      });
      return { code, out: lines.join("\n"), err: errors.join("\n") };
    };
    const one = await run(["--license", "2"]);
    expect(one.code).to.equal(0);
    expect(one.out).to.contain("uptime         60.00%: 6 of 10 liveness windows held a heartbeat");
    expect(one.out).to.contain("participation  83.33%: 5 of 6 jobs asked while live were answered");
    expect(one.out).to.contain("score          49.99%");
    const all = await run(["--json"]);
    expect(all.code).to.equal(0);
    // A license's share of the pool: its points times its score, of every license's. Only A weighs: B has no
    // point (its votes were not committed first) and C's score is 0 (five wrong answers).
    const shareOf = (nodes: NetworkNode[], licenseId: bigint) => {
      const { payouts, totalWeight } = epochPayouts(
        nodes.map((node) => ({ licenseId: BigInt(node.licenseId), points: node.points, scoreBps: node.scoreBps })),
        pool,
      );
      return { amount: payouts.find((payout) => payout.licenseId === licenseId)?.amount ?? 0n, totalWeight };
    };
    const nowFigures = (JSON.parse(all.out) as NetworkNodes).nodes;
    expect(nowFigures.map((node) => [node.licenseId, node.points])).to.deep.equal([
      [1, 1],
      [2, 0],
      [3, 1],
    ]);
    expect(one.out).to.contain(
      "would earn     0.0 of a pool of 900.0 staked tokens, were the epoch to end now (weight 0 of 10000: points times score",
    );
    const first = await run(["--license", "1"]);
    expect(first.out).to.contain(
      "would earn     900.0 of a pool of 900.0 staked tokens, were the epoch to end now (weight 10000 of 10000: points times score",
    );
    const api = (JSON.parse(all.out) as NetworkNodes).nodes.find((node) => node.licenseId === 3);
    expect(api).to.include({ scoreBps: 0, disagreed: 5 });
    expect(await run(["--license", "99"])).to.include({ code: 1, err: "License 99 was never delegated: it has no figures." });

    // The epoch ends: `--epoch` replays it, counted to its end (1,008 windows of 10 minutes in 7 days).
    const epoch = Number(await registry.currentEpoch());
    await time.increase(await registry.EPOCH_DURATION());
    await ethers.provider.send("evm_mine", []);
    const ended = await run(["--epoch", String(epoch), "--license", "2"]);
    expect(ended.code).to.equal(0);
    expect(ended.out).to.contain("uptime         0.59%: 6 of 1008 liveness windows held a heartbeat");
    expect(ended.out).to.contain("participation  83.33%: 5 of 6 jobs asked while live were answered");
    expect(ended.out).to.match(/would earn {5}[\d.]+ of a pool of 900\.0 staked tokens, settles from /);
    // Once its settlement opens, the epoch's payouts are the tree every node votes: figures counted to its end.
    await time.increaseTo((await rewardPools.settlementOf(epoch)).settlementOpensAt);
    await ethers.provider.send("evm_mine", []);
    const settled = await run(["--epoch", String(epoch), "--license", "1"]);
    const endedFigures = (JSON.parse((await run(["--epoch", String(epoch), "--json"])).out) as NetworkNodes).nodes;
    const share = shareOf(endedFigures, 1n).amount;
    expect(share).to.be.above(0n);
    expect(settled.out).to.match(
      new RegExp(
        `earned {9}${formatUnits(share, 18).replace(".", "\\.")} of a pool of 900\\.0 staked tokens \\(root 0x[0-9a-f]{64} not accepted yet\\)`,
      ),
    );
    expect((await run(["--epoch", String(epoch + 5)])).code).to.equal(1);
    expect((await run(["--epoch", "-1"])).code).to.equal(1);
    expect((await run(["--license", "two"])).code).to.equal(1);
    expect((await run(["--license", "1"].concat(["--bogus"]))).code).to.equal(1);
  });

  it("gives a copier no points: votes read from the chain and repeated, plainly or committed after the reveal, earn nothing", async function () {
    const { registry, rewardPools, nodeRegistry, admin, consumer, burnerA, burnerB, burnerC } = await loadFixture(fixture);
    // Quorum 3: the honest two leave each job open, so the copier's vote is the one that finalizes it.
    await nodeRegistry.connect(admin).setQuorum(3n);
    const registryAddress = await registry.getAddress();
    /** The copier: reads the job's first vote from the chain, takes its answer from the reveal's calldata, as its own. */
    const copied = async (jobId: bigint) => {
      const [vote] = await registry.queryFilter(registry.filters.VoteSubmitted(jobId));
      const reveal = registry.interface.parseTransaction((await ethers.provider.getTransaction(vote.transactionHash))!)!;
      const answer = (reveal.args.submissions as Array<ReturnType<typeof submission>>).find((entry) => entry.jobId === jobId)!;
      return { ...submission(jobId, [3n], answer.balance), queryResultHash: answer.queryResultHash, sourceBlock: answer.sourceBlock };
    };
    for (let job = 0; job < 4; job++) {
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      const jobId = (await registry.nextJobId()) - 1n;
      await commitAndReveal(registry, [
        { operator: burnerA, submissions: [submission(jobId, [1n], RIGHT)] },
        { operator: burnerB, submissions: [submission(jobId, [2n], RIGHT)] },
      ]);
      const copy = await copied(jobId);
      // Half the time plainly; half the time through commit–reveal, committed once the answer was out.
      if (job % 2 === 0) await registry.connect(burnerC).submitResults([copy]);
      else await commitAndReveal(registry, [{ operator: burnerC, submissions: [copy] }]);
      expect((await registry.getResult(jobId)).status).to.equal(2n); // finalized, with the copy's vote
    }
    const network = new NetworkService({ l2, verificationRegistry: registryAddress, maxAgeMs: 0 });
    const figures = (await network.nodes()).nodes;
    // The copier's votes count as votes and as agreements, never as points; the honest licenses' all do.
    expect(figures.map((node) => [node.licenseId, node.votes, node.agreed, node.points])).to.deep.equal([
      [1, 4, 4, 4],
      [2, 4, 4, 4],
      [3, 4, 4, 0],
    ]);
    const pool = (await rewardPools.settlementOf(await registry.currentEpoch())).pool + 1_000n;
    const { payouts } = epochPayouts(
      figures.map((node) => ({ licenseId: BigInt(node.licenseId), points: node.points, scoreBps: node.scoreBps })),
      pool,
    );
    expect(payouts.map((payout) => payout.licenseId)).to.deep.equal([1n, 2n]);
  });

  it("answers 401 without a key, 501 without the network, 503 when the L2 does not answer", async function () {
    const { registry } = await loadFixture(fixture);
    api = await startTestApi(NO_SOURCES);
    expect((await get("/api/network/nodes", "")).status).to.equal(401);
    const unconfigured = await get();
    expect(unconfigured.status).to.equal(501);
    expect(unconfigured.body.message).to.match(/NETWORK_VERIFICATION_REGISTRY/);
    const spec = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, { get: { security: unknown[]; responses: Record<string, unknown> } }>;
    };
    expect(Object.keys(spec.paths["/api/network/nodes"].get.responses)).to.have.members(["200", "401", "429", "501", "503"]);
    expect(spec.paths["/api/network/nodes"].get.security).to.deep.equal([{ apiKey: [] }]);
    await api.close();

    const silent = { request: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:9")) };
    api = await startTestApi(NO_SOURCES, {
      network: new NetworkService({ l2: silent, verificationRegistry: await registry.getAddress() }),
    });
    const down = await get();
    expect(down.status).to.equal(503);
    expect(down.body.message).to.equal("The network's figures could not be read from the L2; try again shortly");
    expect(JSON.stringify(down.body)).not.to.contain("127.0.0.1");
  });
});
