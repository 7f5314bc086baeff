import { expect } from "chai";
import { NOBODY_EARNED_ROOT, rewardsTree, type RewardsTree } from "@avn/protocol/rewards";

import { fixture, loadFixture, ethers, time } from "./verification-registry/fixture.ts";
import { E18, EPOCH_DURATION } from "../../helpers/protocol.ts";

const SETTLEMENT_DELAY = 3_600n;
const DISPUTE_PERIOD = 7_200n;
const POOL = 1_000n * E18;

/** What the split reads of a license's figures: its points (its own agreeing votes) and its score. */
const figures = (licenseId: bigint, points: number, scoreBps: number) => ({ licenseId, points, scoreBps });

describe("RewardPools: epoch rewards split by score, settled by a quorum-voted root, claimed with proofs", function () {
  async function deployed() {
    const context = await loadFixture(fixture);
    const { registry, admin, primary } = context;
    const pools = await ethers.deployContract("RewardPools", [
      await registry.getAddress(),
      SETTLEMENT_DELAY,
      DISPUTE_PERIOD,
      admin.address,
      0n,
    ]);
    await pools.connect(admin).grantRole(await pools.REWARDS_FUNDER_ROLE(), admin.address);
    await primary.connect(admin).approve(await pools.getAddress(), ethers.MaxUint256);
    const epoch = await pools.currentEpoch();
    await pools.connect(admin).fundEpochRewards(epoch, POOL);
    return { ...context, pools, epoch };
  }

  /** Moves to the epoch's settlement, and has every node beat so that its licenses are live. */
  async function atSettlement(context: Awaited<ReturnType<typeof deployed>>) {
    const settlement = await context.pools.settlementOf(context.epoch);
    await time.increaseTo(settlement.settlementOpensAt);
    for (const node of context.nodes) await context.nodeRegistry.connect(node.burner)["heartbeat()"]();
  }

  /** The fixture's three licenses: 1 honest (10 agreeing votes at full score), 2 at half score, 3 wrong (score 0). */
  const tree = (epoch: bigint, pool = POOL): RewardsTree =>
    rewardsTree(epoch, pool, [figures(1n, 10, 10_000), figures(2n, 10, 5_000), figures(3n, 10, 0)]);

  async function accepted(context: Awaited<ReturnType<typeof deployed>>, rewards = tree(context.epoch)) {
    await atSettlement(context);
    await context.pools.connect(context.nodes[0].burner).voteRewardsRoot(context.epoch, rewards.root, [1n]);
    await context.pools.connect(context.nodes[1].burner).voteRewardsRoot(context.epoch, rewards.root, [2n]);
    return rewards;
  }

  const claimOf = (rewards: RewardsTree, licenseId: bigint) => {
    const payout = rewards.proofOf(licenseId)!;
    return { epoch: rewards.epoch, licenseId, amount: payout.amount, proof: payout.proof };
  };

  it("splits the pool by agreeing votes times score, never above the pool", function () {
    const rewards = tree(7n);
    // Weights 100,000 and 50,000: two thirds and one third, rounded down; the wrong license is not in the tree.
    expect(rewards.payouts.map((payout) => [payout.licenseId, payout.amount])).to.deep.equal([
      [1n, (POOL * 2n) / 3n],
      [2n, POOL / 3n],
    ]);
    expect(rewards.proofOf(3n)).to.equal(undefined);
    expect(rewards.payouts.reduce((sum, payout) => sum + payout.amount, 0n)).to.be.at.most(POOL);
    expect(rewardsTree(7n, POOL, [figures(1n, 0, 10_000), figures(2n, 5, 0)]).root).to.equal(NOBODY_EARNED_ROOT);
  });

  it("funds only through the funder role, for the current or a later epoch, with a non-zero amount", async function () {
    const { pools, admin, outsider, epoch } = await deployed();
    await expect(pools.connect(outsider).fundEpochRewards(epoch, 1n)).to.be.revertedWithCustomError(
      pools,
      "AccessControlUnauthorizedAccount",
    );
    await expect(pools.connect(admin).fundEpochRewards(epoch, 0n)).to.be.revertedWithCustomError(pools, "RewardPools_ZeroAmount");
    await expect(pools.connect(admin).fundEpochRewards(epoch + 2n, 5n))
      .to.emit(pools, "EpochRewardsFunded")
      .withArgs(epoch + 2n, admin.address, 5n);
    await time.increase(EPOCH_DURATION);
    await expect(pools.connect(admin).fundEpochRewards(epoch, 1n))
      .to.be.revertedWithCustomError(pools, "RewardPools_EpochEnded")
      .withArgs(epoch, epoch + 1n);
    expect((await pools.settlementOf(epoch)).pool).to.equal(POOL);
  });

  it("takes root votes only in the settlement window, from live operators, once per license and round", async function () {
    const context = await deployed();
    const { pools, nodes, outsider, epoch } = context;
    const rewards = tree(epoch);
    const settlement = await pools.settlementOf(epoch);
    expect(settlement.settlementOpensAt).to.equal((await context.registry.EPOCHS_START()) + EPOCH_DURATION + SETTLEMENT_DELAY);
    await expect(pools.connect(nodes[0].burner).voteRewardsRoot(epoch, rewards.root, [1n]))
      .to.be.revertedWithCustomError(pools, "RewardPools_VotingClosed")
      .withArgs(epoch, settlement.settlementOpensAt, settlement.votingClosesAt);

    await atSettlement(context);
    await expect(pools.connect(nodes[0].burner).voteRewardsRoot(epoch, rewards.root, [])).to.be.revertedWithCustomError(
      pools,
      "RewardPools_NoLicenses",
    );
    // Another operator's license, or no license at all: refused.
    await expect(pools.connect(nodes[0].burner).voteRewardsRoot(epoch, rewards.root, [2n]))
      .to.be.revertedWithCustomError(pools, "RewardPools_NotLiveOperator")
      .withArgs(nodes[0].burner.address);
    await expect(pools.connect(outsider).voteRewardsRoot(epoch, rewards.root, [1n])).to.be.revertedWithCustomError(
      pools,
      "RewardPools_NotLiveOperator",
    );
    await expect(pools.connect(nodes[0].burner).voteRewardsRoot(epoch, rewards.root, [1n]))
      .to.emit(pools, "RewardsRootVoted")
      .withArgs(epoch, rewards.root, nodes[0].burner.address, 0n, [1n], 1n)
      .and.not.to.emit(pools, "RewardsRootAccepted");
    expect(await pools.hasVotedRoot(epoch, 1n)).to.equal(true);
    await expect(pools.connect(nodes[0].burner).voteRewardsRoot(epoch, ethers.id("other"), [1n]))
      .to.be.revertedWithCustomError(pools, "RewardPools_AlreadyVoted")
      .withArgs(epoch, 1n);
    // A different root does not add to the first one's tally.
    await pools.connect(nodes[2].burner).voteRewardsRoot(epoch, ethers.id("other"), [3n]);
    expect(await pools.rootVotesOf(epoch, rewards.root)).to.equal(1n);
    // The second license on the same root reaches the quorum (2): accepted.
    const tx = pools.connect(nodes[1].burner).voteRewardsRoot(epoch, rewards.root, [2n]);
    await expect(tx).to.emit(pools, "RewardsRootAccepted");
    const after = await pools.settlementOf(epoch);
    expect([after.root, after.accepted, after.claimsOpenAt]).to.deep.equal([
      rewards.root,
      true,
      BigInt(await time.latest()) + DISPUTE_PERIOD,
    ]);
  });

  it("pays each owner its proven payout in staked tokens once the dispute period is over, once", async function () {
    const context = await deployed();
    const { pools, staked, alice, bob, carol, epoch } = context;
    const rewards = await accepted(context);
    await expect(pools.connect(alice).claimRewards([claimOf(rewards, 1n)]))
      .to.be.revertedWithCustomError(pools, "RewardPools_ClaimsNotOpen")
      .withArgs(epoch);
    await time.increase(DISPUTE_PERIOD);

    await expect(pools.connect(bob).claimRewards([claimOf(rewards, 1n)]))
      .to.be.revertedWithCustomError(pools, "RewardPools_NotLicenseOwner")
      .withArgs(1n, bob.address);
    const inflated = { ...claimOf(rewards, 1n), amount: claimOf(rewards, 1n).amount + 1n };
    await expect(pools.connect(alice).claimRewards([inflated]))
      .to.be.revertedWithCustomError(pools, "RewardPools_InvalidProof")
      .withArgs(epoch, 1n);
    // The wrong license has no leaf: a claim of any amount fails its proof.
    await expect(
      pools.connect(carol).claimRewards([{ epoch, licenseId: 3n, amount: 1n, proof: claimOf(rewards, 1n).proof }]),
    ).to.be.revertedWithCustomError(pools, "RewardPools_InvalidProof");
    await expect(pools.connect(alice).claimRewards([])).to.be.revertedWithCustomError(pools, "RewardPools_NothingToClaim");

    const before = await staked.balanceOf(alice.address);
    await expect(pools.connect(alice).claimRewards([claimOf(rewards, 1n)]))
      .to.emit(pools, "RewardsClaimed")
      .withArgs(epoch, 1n, alice.address, (POOL * 2n) / 3n);
    expect((await staked.balanceOf(alice.address)) - before).to.equal((POOL * 2n) / 3n);
    expect(await pools.isClaimed(epoch, 1n)).to.equal(true);
    await expect(pools.connect(alice).claimRewards([claimOf(rewards, 1n)]))
      .to.be.revertedWithCustomError(pools, "RewardPools_AlreadyClaimed")
      .withArgs(epoch, 1n);
    await pools.connect(bob).claimRewards([claimOf(rewards, 2n)]);
    const settlement = await pools.settlementOf(epoch);
    expect(settlement.claimed).to.equal((POOL * 2n) / 3n + POOL / 3n);
    expect(settlement.claimed).to.be.at.most(settlement.pool);
  });

  it("never pays more than the pool, whatever the accepted root says", async function () {
    const context = await deployed();
    const { pools, alice, bob, epoch } = context;
    // A root computed for 6/5 of the pool: the first claim (4/5 of the pool) fits, the second (2/5) would overdraw it.
    const rewards = await accepted(context, tree(epoch, (POOL * 6n) / 5n));
    await time.increase(DISPUTE_PERIOD);
    await pools.connect(alice).claimRewards([claimOf(rewards, 1n)]);
    await expect(pools.connect(bob).claimRewards([claimOf(rewards, 2n)]))
      .to.be.revertedWithCustomError(pools, "RewardPools_PoolExceeded")
      .withArgs(epoch, POOL, (POOL * 4n) / 5n);
  });

  it("lets governance reject a root in its dispute period; the licenses then vote again", async function () {
    const context = await deployed();
    const { pools, admin, outsider, nodes, alice, epoch } = context;
    const bad = await accepted(context, tree(epoch, POOL * 2n));
    await expect(pools.connect(outsider).rejectRewardsRoot(epoch)).to.be.revertedWithCustomError(pools, "AccessControlUnauthorizedAccount");
    await expect(pools.connect(admin).rejectRewardsRoot(epoch)).to.emit(pools, "RewardsRootRejected").withArgs(epoch, bad.root, 0n);
    await expect(pools.connect(admin).rejectRewardsRoot(epoch)).to.be.revertedWithCustomError(pools, "RewardPools_NotDisputable");
    const settlement = await pools.settlementOf(epoch);
    expect([settlement.accepted, settlement.round, settlement.root]).to.deep.equal([false, 1n, ethers.ZeroHash]);
    expect(await pools.hasVotedRoot(epoch, 1n)).to.equal(false);
    expect(await pools.rootVotesOf(epoch, bad.root)).to.equal(0n);

    const good = tree(epoch);
    await pools.connect(nodes[0].burner).voteRewardsRoot(epoch, good.root, [1n]);
    await pools.connect(nodes[2].burner).voteRewardsRoot(epoch, good.root, [3n]);
    await time.increase(DISPUTE_PERIOD);
    await expect(pools.connect(admin).rejectRewardsRoot(epoch)).to.be.revertedWithCustomError(pools, "RewardPools_NotDisputable");
    await expect(pools.connect(alice).claimRewards([claimOf(bad, 1n)])).to.be.revertedWithCustomError(pools, "RewardPools_InvalidProof");
    await pools.connect(alice).claimRewards([claimOf(good, 1n)]);
  });

  it("rolls a pool over when nobody earned, or when no root was accepted before voting closed", async function () {
    const context = await deployed();
    const { pools, admin, nodes, epoch } = context;
    await pools.connect(admin).fundEpochRewards(epoch + 1n, POOL);
    await expect(pools.rollOverEpochRewards(epoch)).to.be.revertedWithCustomError(pools, "RewardPools_CannotRollOver");
    await atSettlement(context);
    await pools.connect(nodes[0].burner).voteRewardsRoot(epoch, NOBODY_EARNED_ROOT, [1n]);
    await pools.connect(nodes[1].burner).voteRewardsRoot(epoch, NOBODY_EARNED_ROOT, [2n]);
    // Still in its dispute period: governance could reject the empty root.
    await expect(pools.rollOverEpochRewards(epoch)).to.be.revertedWithCustomError(pools, "RewardPools_CannotRollOver");
    await time.increase(DISPUTE_PERIOD);
    const current = await pools.currentEpoch();
    await expect(pools.rollOverEpochRewards(epoch)).to.emit(pools, "EpochRewardsRolledOver").withArgs(epoch, current, POOL);
    expect((await pools.settlementOf(current)).pool).to.equal(POOL * 2n);
    await expect(pools.rollOverEpochRewards(epoch)).to.be.revertedWithCustomError(pools, "RewardPools_CannotRollOver");

    // The next epoch: nobody votes in its window, then its pool rolls over too.
    const next = epoch + 1n;
    // The next transaction's block comes one second after the block `increaseTo` mines.
    await time.increaseTo((await pools.settlementOf(next)).votingClosesAt - 2n);
    await expect(pools.rollOverEpochRewards(next)).to.be.revertedWithCustomError(pools, "RewardPools_CannotRollOver");
    await time.increaseTo((await pools.settlementOf(next)).votingClosesAt);
    await expect(pools.rollOverEpochRewards(next)).to.emit(pools, "EpochRewardsRolledOver");
    await expect(pools.connect(nodes[0].burner).voteRewardsRoot(next, NOBODY_EARNED_ROOT, [1n])).to.be.revertedWithCustomError(
      pools,
      "RewardPools_VotingClosed",
    );
  });

  it("refuses a root vote once a root is accepted, and a pool that paid someone cannot roll over", async function () {
    const context = await deployed();
    const { pools, nodes, alice, epoch } = context;
    const rewards = await accepted(context);
    await expect(pools.connect(nodes[2].burner).voteRewardsRoot(epoch, rewards.root, [3n]))
      .to.be.revertedWithCustomError(pools, "RewardPools_RootAccepted")
      .withArgs(epoch);
    await time.increase(DISPUTE_PERIOD);
    await pools.connect(alice).claimRewards([claimOf(rewards, 1n)]);
    await time.increase(EPOCH_DURATION * 2n);
    await expect(pools.rollOverEpochRewards(epoch)).to.be.revertedWithCustomError(pools, "RewardPools_CannotRollOver");
  });

  it("refuses a zero registry and periods above 30 days", async function () {
    const { registry, admin } = await deployed();
    const factory = await ethers.getContractFactory("RewardPools");
    const address = await registry.getAddress();
    await expect(factory.deploy(ethers.ZeroAddress, 0n, 0n, admin.address, 0n)).to.be.revertedWithCustomError(
      factory,
      "RewardPools_ZeroAddress",
    );
    const tooLong = 30n * 86_400n + 1n;
    await expect(factory.deploy(address, tooLong, 0n, admin.address, 0n))
      .to.be.revertedWithCustomError(factory, "RewardPools_InvalidPeriod")
      .withArgs(tooLong);
    await expect(factory.deploy(address, 0n, tooLong, admin.address, 0n)).to.be.revertedWithCustomError(
      factory,
      "RewardPools_InvalidPeriod",
    );
  });
});
