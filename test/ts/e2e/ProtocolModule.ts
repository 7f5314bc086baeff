import { expect } from "chai";
import { network } from "hardhat";

import ProtocolModule from "../../../deploy/modules/Protocol.ts";
import { queryResultHash } from "../../../src/common/query-result.ts";
import { addressToBytes32, balanceWord } from "../../helpers/protocol.ts";
import { E18 } from "@avn/protocol/units";
import { IgnoreReason } from "@avn/protocol/constants";
import { revealCommitmentOf } from "@avn/protocol/commit-reveal";
import { EpochSettlements } from "../../../src/chains/evm/epoch-settlement.ts";

const { ethers, ignition, networkHelpers } = await network.create();

describe("end to end: the five contracts deployed by the Protocol module", function () {
  it("license bought, delegated, heartbeat, collateral, request, three nodes submit, quorum 2 finalizes, fee burned and paid, epoch settled and reward claimed", async function () {
    const [deployer, alice, bob, carol, burnerA, burnerB, burnerC, consumer] = await ethers.getSigners();
    const deployed = await ignition.deploy(ProtocolModule);
    // Typed handles on the deployed addresses (module results from useModule are untyped).
    const primary = await ethers.getContractAt("PrimaryToken", await deployed.primary.getAddress());
    const staked = await ethers.getContractAt("StakedToken", await deployed.staked.getAddress());
    const license = await ethers.getContractAt("NodeLicense", await deployed.license.getAddress());
    const nodeRegistry = await ethers.getContractAt("NodeRegistry", await deployed.nodeRegistry.getAddress());
    const registry = await ethers.getContractAt("VerificationRegistry", await deployed.verificationRegistry.getAddress());
    const registryAddress = await registry.getAddress();
    const rewardPools = await ethers.getContractAt("RewardPools", await deployed.rewardPools.getAddress());
    expect(await rewardPools.REGISTRY()).to.equal(registryAddress);
    expect(await rewardPools.hasRole(await rewardPools.REWARDS_FUNDER_ROLE(), deployer.address)).to.equal(true);
    const fee = await registry.requestFee();
    expect(await nodeRegistry.quorum()).to.equal(2n);
    expect(await license.nodeRegistry()).to.equal(await nodeRegistry.getAddress());
    // The attestation verifier is deployed against this registry and alone may record attestations in it.
    const verifier = await ethers.getContractAt("AttestationVerifier", await deployed.attestationVerifier.getAddress());
    expect(await verifier.REGISTRY()).to.equal(registryAddress);
    expect(await verifier.NODE_REGISTRY()).to.equal(await nodeRegistry.getAddress());
    expect(await registry.hasRole(await registry.ATTESTATION_ROLE(), await verifier.getAddress())).to.equal(true);

    // Owners buy one license each and delegate it to their node's burner wallet, which heart-beats.
    const nodes = [
      { owner: alice, burner: burnerA },
      { owner: bob, burner: burnerB },
      { owner: carol, burner: burnerC },
    ];
    for (const [index, { owner, burner }] of nodes.entries()) {
      const licenseId = BigInt(index + 1);
      await primary.connect(deployer).transfer(owner.address, 10_000n * E18);
      await primary.connect(owner).approve(await license.getAddress(), ethers.MaxUint256);
      await expect(license.connect(owner).buy(1n, await license.quote(1n))).to.emit(license, "LicensesPurchased");
      await nodeRegistry.connect(owner).delegate([licenseId], burner.address);
      await nodeRegistry.connect(burner)["heartbeat(uint32)"](60);
      expect(await nodeRegistry.isLive(licenseId)).to.equal(true);
    }

    // The consumer stakes primary tokens straight into collateral; governance funds this epoch's rewards.
    await primary.connect(deployer).transfer(consumer.address, 1_000n * E18);
    await primary.connect(consumer).approve(registryAddress, ethers.MaxUint256);
    await registry.connect(consumer).stakeCollateral(consumer.address, 100n * E18);
    await primary.connect(deployer).approve(await rewardPools.getAddress(), ethers.MaxUint256);
    await rewardPools.connect(deployer).fundEpochRewards(0n, 300n * E18);

    // A job: how many of the primary token does some holder own on Ethereum?
    const holder = ethers.Wallet.createRandom().address;
    const token = await primary.getAddress();
    await expect(registry.connect(consumer).requestEvmBalance(holder, token))
      .to.emit(registry, "VerificationRequested")
      .withArgs(1n, consumer.address, 0, addressToBytes32(holder), addressToBytes32(token), fee);

    // Each node votes the balance and the hash of the QueryResult it read (the bytes stay off-chain).
    const answer = (licenseId: bigint) => [
      {
        jobId: 1n,
        licenseIds: [licenseId],
        owner: addressToBytes32(holder),
        asset: addressToBytes32(token),
        balance: 183n,
        queryResultHash: queryResultHash(balanceWord(183n)),
        sourceBlock: 4242n,
      },
    ];
    const stakedSupplyBefore = await staked.totalSupply();
    // As the nodes vote: the three commit to their answers in one block (the one after the request), then
    // reveal them in the next; the quorum's two finalize the job and the third reveal, in the same block, comes
    // too late to count. Blocks are mined by hand here so that the placement is the network's.
    const salts = [1, 2, 3].map(() => ethers.hexlify(ethers.randomBytes(32)));
    const burners = [burnerA, burnerB, burnerC];
    await ethers.provider.send("evm_setAutomine", [false]);
    try {
      for (const [index, burner] of burners.entries()) {
        const reveal = registry.interface.encodeFunctionData("revealResults", [salts[index], answer(BigInt(index + 1))]) as `0x${string}`;
        await registry.connect(burner).commitResults(revealCommitmentOf(burner.address as `0x${string}`, reveal));
      }
      await ethers.provider.send("evm_mine", []);
      const reveals = [];
      for (const [index, burner] of burners.entries()) {
        reveals.push(await registry.connect(burner).revealResults(salts[index], answer(BigInt(index + 1)), { gasLimit: 1_000_000n }));
      }
      await ethers.provider.send("evm_mine", []);
      await expect(reveals[1])
        .to.emit(registry, "VerificationFulfilled")
        .withArgs(1n, 0, addressToBytes32(holder), addressToBytes32(token), 183n, queryResultHash(balanceWord(183n)), 4242n);
      await expect(reveals[2]).to.emit(registry, "SubmissionIgnored").withArgs(1n, burnerC.address, IgnoreReason.jobFinalized);
    } finally {
      await ethers.provider.send("evm_setAutomine", [true]);
    }

    // The result is readable by integrations.
    const [balance, sourceBlock, , jobId] = await registry.latestBalance(0, addressToBytes32(holder), addressToBytes32(token));
    expect([balance, sourceBlock, jobId]).to.deep.equal([183n, 4242n, 1n]);

    // The fee is credited to the agreeing licenses; each owner's claim burns its share of staked tokens
    // and stakes their backing again for the owner: the fee is paid in staked tokens.
    for (const [index, owner] of [alice, bob].entries()) {
      const before = await primary.balanceOf(owner.address);
      await registry.connect(owner).claimFees([BigInt(index + 1)]);
      expect(await staked.balanceOf(owner.address)).to.equal(fee / 2n);
      expect(await primary.balanceOf(owner.address)).to.equal(before);
    }
    expect(await staked.totalSupply()).to.equal(stakedSupplyBefore);
    expect(await registry.totalFeesBurned()).to.equal(fee);
    await expect(registry.connect(carol).claimFees([3n])).to.be.revertedWithCustomError(registry, "VerificationRegistry_NothingToClaim");
    expect(await nodeRegistry.submissionsOf(1n)).to.equal(1n);
    expect(await registry.voteStatsOf(1n)).to.deep.equal([1n, 0n]);

    // After the epoch and its settlement delay, the nodes vote the root of the payouts that the registries'
    // events give (the agreeing licenses, equal figures: half each), and after the dispute period the
    // owners claim them, paid in staked tokens; the late license, which never agreed, earns nothing.
    const settlement = await rewardPools.settlementOf(0n);
    await networkHelpers.time.increaseTo(settlement.settlementOpensAt);
    for (const { burner } of nodes) await nodeRegistry.connect(burner)["heartbeat(uint32)"](60);
    const { tree } = await new EpochSettlements(
      { request: (method, params) => ethers.provider.send(method, params) },
      await rewardPools.getAddress(),
    ).rewards(0);
    expect(tree.payouts.map((payout) => [payout.licenseId, payout.amount])).to.deep.equal([
      [1n, 150n * E18],
      [2n, 150n * E18],
    ]);
    await rewardPools.connect(burnerA).voteRewardsRoot(0n, tree.root, [1n]);
    await expect(rewardPools.connect(burnerC).voteRewardsRoot(0n, tree.root, [3n])).to.emit(rewardPools, "RewardsRootAccepted");
    await networkHelpers.time.increase(await rewardPools.DISPUTE_PERIOD());
    for (const [index, owner] of [alice, bob].entries()) {
      const licenseId = BigInt(index + 1);
      const { amount, proof } = tree.proofOf(licenseId)!;
      await rewardPools.connect(owner).claimRewards([{ epoch: 0n, licenseId, amount, proof }]);
      expect(await staked.balanceOf(owner.address)).to.equal(fee / 2n + 150n * E18);
    }
    expect(tree.proofOf(3n)).to.equal(undefined);

    // The staked token is still exactly backed.
    expect(await primary.balanceOf(await staked.getAddress())).to.equal(
      (await staked.totalSupply()) + (await staked.totalPendingRedemptions()),
    );
  });
});
