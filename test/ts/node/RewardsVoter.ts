import { expect } from "chai";
import { pino } from "pino";

import { EpochSettlements } from "../../../src/chains/evm/epoch-settlement.ts";
import { NodeMetrics } from "../../../src/node/health.ts";
import { RewardsVoter } from "../../../src/node/rewards-voter.ts";
import type { TxOutcome } from "../../../src/node/tx-sender.ts";
import { E18 } from "../../helpers/protocol.ts";
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
  type Signer,
} from "../contracts/verification-registry/fixture.ts";

const l2 = { request: <T>(method: string, params: unknown[]) => ethers.provider.send(method, params) as Promise<T> };

describe("node rewards voter: each node votes the root of an ended epoch's payouts, computed from the chain", function () {
  async function epochWithJobs() {
    const context = await loadFixture(fixture);
    const { registry, rewardPools, nodeRegistry, admin, consumer, burnerA, burnerB, burnerC } = context;
    // A snapshot's revert keeps the clock other files moved: the next block may come epochs after the
    // fixture's. Mine it first, read the epoch then, and have the nodes beat in it.
    await ethers.provider.send("evm_mine", []);
    const epoch = await rewardPools.currentEpoch();
    for (const burner of [burnerA, burnerB, burnerC]) await nodeRegistry.connect(burner)["heartbeat()"]();
    await rewardPools.connect(admin).fundEpochRewards(epoch, 600n * E18);
    // Three jobs: A and B agree on each, by commit–reveal as the nodes vote; C answers the first wrong and then stops.
    for (const jobId of [1n, 2n, 3n]) {
      await registry.connect(consumer).requestEvmBalance(HOLDER, TOKEN);
      if (jobId === 1n) await submit(registry, burnerC, jobId, [3n], 999n);
      await commitAndReveal(registry, [
        { operator: burnerA, submissions: [submission(jobId, [1n], 5n)] },
        { operator: burnerB, submissions: [submission(jobId, [2n], 5n)] },
      ]);
    }
    return { ...context, epoch };
  }

  /**
   * A node's voter whose transactions its burner sends, as the node's sender would (estimating gas first);
   * `beforeSend` runs just before each.
   */
  function voterOf(burner: Signer, licenses: bigint[], rewardPools: string, sent: string[], beforeSend = async () => {}) {
    return new RewardsVoter({
      l2,
      rewardPools,
      licenses: () => licenses,
      sender: {
        send: async (kind: string, to: string, data: string) => {
          await beforeSend();
          const tx = await burner.sendTransaction({ to, data });
          sent.push(kind);
          return { id: sent.length, outcome: tx.wait().then((): TxOutcome => "mined") };
        },
      },
      intervalMs: 60_000,
      metrics: new NodeMetrics(),
      logger: pino({ level: "silent" }),
      onError: () => {},
    });
  }

  it("waits for the settlement, votes once per epoch, and the quorum's root pays what the figures give", async function () {
    const { rewardPools, nodeRegistry, epoch, alice, bob, burnerA, burnerB, burnerC } = await epochWithJobs();
    const pools = await rewardPools.getAddress();
    const sent: string[] = [];
    const voters = [voterOf(burnerA, [1n], pools, sent), voterOf(burnerB, [2n], pools, sent), voterOf(burnerC, [3n], pools, sent)];
    // The epoch has not ended, then its settlement has not opened: nothing to vote.
    expect(await voters[0].vote()).to.deep.equal([]);
    const settlement = await rewardPools.settlementOf(epoch);
    await time.increaseTo(settlement.settlementOpensAt - 3_600n);
    expect(await voters[0].vote()).to.deep.equal([]);
    expect(sent).to.deep.equal([]);

    await time.increaseTo(settlement.settlementOpensAt);
    for (const burner of [burnerA, burnerB, burnerC]) await nodeRegistry.connect(burner)["heartbeat()"]();
    expect(await voters[0].vote()).to.deep.equal([Number(epoch)]);
    // Voted: a second pass sends nothing more.
    expect(await voters[0].vote()).to.deep.equal([]);
    expect(await voters[1].vote()).to.deep.equal([Number(epoch)]);
    const accepted = await rewardPools.settlementOf(epoch);
    expect(accepted.accepted).to.equal(true);
    // Accepted with the quorum (2): the third node has nothing left to vote.
    expect(await voters[2].vote()).to.deep.equal([]);
    expect(sent).to.deep.equal(["rewardsRoot", "rewardsRoot"]);

    // The root is the tree anyone computes from the chain: A and B are paid; C, which agreed with no answer, nothing.
    const { tree } = await new EpochSettlements(l2, pools).rewards(Number(epoch));
    expect(accepted.root).to.equal(tree.root);
    const amounts = new Map(tree.payouts.map((payout) => [payout.licenseId, payout.amount]));
    expect(amounts.get(1n)).to.be.above(0n);
    expect(amounts.get(2n)).to.be.above(0n);
    expect(amounts.has(3n)).to.equal(false);
    expect([...amounts.values()].reduce((sum, amount) => sum + amount, 0n)).to.be.at.most(600n * E18);

    await time.increase(await rewardPools.DISPUTE_PERIOD());
    for (const [owner, licenseId] of [
      [alice, 1n],
      [bob, 2n],
    ] as const) {
      const { amount, proof } = tree.proofOf(licenseId)!;
      await expect(rewardPools.connect(owner).claimRewards([{ epoch, licenseId, amount, proof }]))
        .to.emit(rewardPools, "RewardsClaimed")
        .withArgs(epoch, licenseId, owner.address, amount);
    }
  });

  it("takes a root accepted by other votes between its read and its send as done, not as a failure of the L2", async function () {
    const { rewardPools, nodeRegistry, epoch, burnerA, burnerB, burnerC } = await epochWithJobs();
    const pools = await rewardPools.getAddress();
    await time.increaseTo((await rewardPools.settlementOf(epoch)).settlementOpensAt);
    for (const burner of [burnerA, burnerB, burnerC]) await nodeRegistry.connect(burner)["heartbeat()"]();
    const sent: string[] = [];
    const [a, b] = [voterOf(burnerA, [1n], pools, sent), voterOf(burnerB, [2n], pools, sent)];
    // C reads the settlement open and unaccepted; A and B's votes accept the root before C sends its own.
    const c = voterOf(burnerC, [3n], pools, sent, async () => {
      await a.vote();
      await b.vote();
    });
    // C's send fails on the accepted root (`RewardPools_RootAccepted`): the pass ends without a vote, and
    // without the error that would make the node fail over to another L2 endpoint.
    expect(await c.vote()).to.deep.equal([]);
    expect((await rewardPools.settlementOf(epoch)).accepted).to.equal(true);
    expect(await rewardPools.hasVotedRoot(epoch, 3n)).to.equal(false);
    expect(sent).to.deep.equal(["rewardsRoot", "rewardsRoot"]);
  });

  it("computes an ended epoch's tree under the liveness window in force at its settlement's boundary", async function () {
    const { registry, rewardPools, nodeRegistry, admin, epoch, burnerA } = await epochWithJobs();
    const pools = await rewardPools.getAddress();
    const { settlementOpensAt } = await rewardPools.settlementOf(epoch);
    // A beats twice more, at the start of a later window of the epoch's grid and 400 s after: one window
    // more under the current one, two under half of it; B's beats fall in one window either way. (The epoch
    // started where other files left the clock: its grid is read, not assumed.)
    const window = Number(await nodeRegistry.livenessWindow());
    const epochStart = Number(await registry.EPOCHS_START()) + Number(epoch) * Number(await registry.EPOCH_DURATION());
    const nextWindow = epochStart + (Math.floor(((await time.latest()) - epochStart) / window) + 1) * window;
    await time.increaseTo(nextWindow + 1);
    await nodeRegistry.connect(burnerA)["heartbeat()"]();
    await time.increaseTo(nextWindow + 1 + (window * 2) / 3);
    await nodeRegistry.connect(burnerA)["heartbeat()"]();
    const halve = async () => nodeRegistry.connect(admin).setLivenessWindow((await nodeRegistry.livenessWindow()) / 2n);
    const rootOf = async () => (await new EpochSettlements(l2, pools).rewards(Number(epoch))).tree.root;
    // Governance halves the window before the boundary: the epoch is counted on the finer grid.
    const beforeChange = await ethers.provider.send("evm_snapshot", []);
    await time.increaseTo(settlementOpensAt - 10n);
    await halve();
    await time.increaseTo(settlementOpensAt);
    await ethers.provider.send("evm_mine", []);
    const halvedBefore = await rootOf();
    await ethers.provider.send("evm_revert", [beforeChange]);
    // The same change after the boundary moves nothing: every reader, now or later, gets the boundary's tree.
    await time.increaseTo(settlementOpensAt);
    await ethers.provider.send("evm_mine", []);
    const atBoundary = await rootOf();
    await halve();
    expect(await rootOf()).to.equal(atBoundary);
    expect(atBoundary).to.not.equal(halvedBefore);
  });
});
