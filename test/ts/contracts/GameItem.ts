import { expect } from "chai";
import { network } from "hardhat";

import type { BalanceAttestation } from "@avn/protocol/attestation";
import { queryResultHash } from "../../../src/common/query-result.ts";
import { attestationOf, domainOf, signAll } from "../../helpers/attestations.ts";
import { balanceWord, deployProtocol, E18, REQUEST_FEE } from "../../helpers/protocol.ts";
import { JobStatus } from "@avn/protocol/constants";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const MIN_BALANCE = 100n;
const MAX_RESULT_AGE = 3_600n;

/** The example integration: a game item claimable by verified holders. */
async function fixture() {
  const protocol = await deployProtocol(ethers);
  const requiredAsset = ethers.Wallet.createRandom().address; // an ERC-20 on Ethereum, as jobs name it
  // The credits channel's claim platform may mint bought items: here an account stands in for it.
  const minter = protocol.treasury;
  const game = await ethers.deployContract("GameItem", [
    await protocol.attestationVerifier.getAddress(),
    requiredAsset,
    MIN_BALANCE,
    MAX_RESULT_AGE,
    minter.address,
  ]);
  // The game pays job fees from its own collateral: the consumer stakes primary tokens into it.
  await protocol.registry.connect(protocol.consumer).stakeCollateral(await game.getAddress(), 100n * E18);
  const [player] = [protocol.outsider];
  return { ...protocol, game, requiredAsset, player, minter };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** Two of the three nodes answer the player's job with `balance`: quorum 2 finalizes it. */
async function answer(f: Fixture, jobId: bigint, balance: bigint) {
  for (const node of f.nodes.slice(0, 2)) {
    await f.registry.connect(node.burner).submitResults([
      {
        jobId,
        licenseIds: [node.licenseId],
        owner: ethers.zeroPadValue(f.player.address, 32),
        asset: ethers.zeroPadValue(f.requiredAsset, 32),
        balance,
        queryResultHash: queryResultHash(balanceWord(balance)),
        sourceBlock: 1n,
      },
    ]);
  }
}

async function openJob(f: Fixture): Promise<bigint> {
  await f.game.connect(f.player).requestVerification();
  return f.game.jobOf(f.player.address);
}

describe("GameItem (example integration)", function () {
  it("opens a job for the player's balance, paid from the game's collateral, and mints one item to a verified holder", async function () {
    const f = await loadFixture(fixture);
    const collateralBefore = await f.registry.collateralOf(await f.game.getAddress());
    await expect(f.game.connect(f.player).requestVerification()).to.emit(f.game, "VerificationOpened");
    const jobId = await f.game.jobOf(f.player.address);
    const job = await f.registry.getJob(jobId);
    expect(job.requester).to.equal(await f.game.getAddress());
    const opened = await f.registry.queryFilter(f.registry.filters.VerificationRequested(jobId));
    expect([opened[0].args.owner, opened[0].args.asset]).to.deep.equal([
      ethers.zeroPadValue(f.player.address, 32),
      ethers.zeroPadValue(f.requiredAsset, 32),
    ]);
    expect((await f.registry.collateralOf(await f.game.getAddress())).available).to.equal(collateralBefore.available - REQUEST_FEE);

    await answer(f, jobId, MIN_BALANCE);
    await expect(f.game.connect(f.player).claim()).to.emit(f.game, "ItemClaimed").withArgs(f.player.address, 1n, MIN_BALANCE);
    expect(await f.game.ownerOf(1n)).to.equal(f.player.address);
    await expect(f.game.connect(f.player).claim()).to.be.revertedWithCustomError(f.game, "GameItem_AlreadyClaimed");
    await expect(f.game.connect(f.player).requestVerification()).to.be.revertedWithCustomError(f.game, "GameItem_AlreadyClaimed");
  });

  it("refuses a claim without a job, while the job is open, below the minimum, or after the result got old", async function () {
    const f = await loadFixture(fixture);
    await expect(f.game.connect(f.player).claim()).to.be.revertedWithCustomError(f.game, "GameItem_NotVerified");
    const jobId = await openJob(f);
    await expect(f.game.connect(f.player).claim()).to.be.revertedWithCustomError(f.game, "GameItem_VerificationPending");
    await expect(f.game.connect(f.player).requestVerification()).to.be.revertedWithCustomError(f.game, "GameItem_VerificationPending");

    await answer(f, jobId, MIN_BALANCE - 1n);
    await expect(f.game.connect(f.player).claim())
      .to.be.revertedWithCustomError(f.game, "GameItem_BalanceTooLow")
      .withArgs(MIN_BALANCE - 1n, MIN_BALANCE);

    // A new check after buying more: allowed once the last job is closed, and it must be used in time.
    const second = await openJob(f);
    expect(second).to.not.equal(jobId);
    await answer(f, second, MIN_BALANCE * 2n);
    await time.increase(MAX_RESULT_AGE + 1n);
    await expect(f.game.connect(f.player).claim()).to.be.revertedWithCustomError(f.game, "GameItem_ResultTooOld");
  });

  it("treats an expired job as no verification", async function () {
    const f = await loadFixture(fixture);
    const jobId = await openJob(f);
    await time.increase((await f.registry.jobTimeout()) + 1n);
    await f.registry.expireJob(jobId);
    expect((await f.registry.getResult(jobId)).status).to.equal(JobStatus.expired);
    await expect(f.game.connect(f.player).claim()).to.be.revertedWithCustomError(f.game, "GameItem_NotVerified");
  });

  it("refuses zero constructor arguments", async function () {
    const f = await loadFixture(fixture);
    const verifier = await f.attestationVerifier.getAddress();
    const factory = await ethers.getContractFactory("GameItem");
    for (const args of [
      [ethers.ZeroAddress, f.requiredAsset, MIN_BALANCE, MAX_RESULT_AGE],
      [verifier, ethers.ZeroAddress, MIN_BALANCE, MAX_RESULT_AGE],
      [verifier, f.requiredAsset, 0n, MAX_RESULT_AGE],
      [verifier, f.requiredAsset, MIN_BALANCE, 0n],
    ]) {
      await expect(factory.deploy(...(args as [string, string, bigint, bigint]), ethers.ZeroAddress)).to.be.revertedWithCustomError(
        factory,
        "GameItem_ZeroArgument",
      );
    }
  });

  it("mints bought items for its minter only, without taking the buyer's verified claim", async function () {
    const f = await loadFixture(fixture);
    await expect(f.game.connect(f.minter).mintTo(f.player.address, 2n))
      .to.emit(f.game, "ItemMinted")
      .withArgs(f.player.address, 1n)
      .and.to.emit(f.game, "ItemMinted")
      .withArgs(f.player.address, 2n);
    expect(await f.game.balanceOf(f.player.address)).to.equal(2n);
    expect(await f.game.hasClaimed(f.player.address)).to.equal(false);
    await expect(f.game.connect(f.player).mintTo(f.player.address, 1n))
      .to.be.revertedWithCustomError(f.game, "GameItem_NotMinter")
      .withArgs(f.player.address);
    // A game without a minter sells nothing: not even the zero address can mint.
    const unsold = await ethers.deployContract("GameItem", [
      await f.attestationVerifier.getAddress(),
      f.requiredAsset,
      MIN_BALANCE,
      MAX_RESULT_AGE,
      ethers.ZeroAddress,
    ]);
    await expect(unsold.connect(f.minter).mintTo(f.player.address, 1n)).to.be.revertedWithCustomError(unsold, "GameItem_NotMinter");
  });
});

describe("GameItem (example integration): the attested path", function () {
  /** An attestation of the player's balance of the required asset, signed by the first two nodes. */
  async function attested(f: Fixture, fields: Partial<BalanceAttestation> = {}, nodes = f.nodes.slice(0, 2)) {
    const attestation = await attestationOf(ethers, {
      owner: ethers.zeroPadValue(f.player.address, 32),
      asset: ethers.zeroPadValue(f.requiredAsset, 32),
      balance: MIN_BALANCE,
      ...fields,
    });
    const signatures = await signAll(
      await domainOf(ethers, await f.attestationVerifier.getAddress()),
      attestation,
      nodes.map(({ burner, licenseId }) => ({ burner, licenseIds: [licenseId] })),
    );
    return [attestation, signatures] as const;
  }

  it("mints one item on a quorum-signed attestation, in one transaction, without a job or a fee", async function () {
    const f = await loadFixture(fixture);
    const collateralBefore = await f.registry.collateralOf(await f.game.getAddress());
    const [attestation, signatures] = await attested(f);
    await expect(f.game.connect(f.player).claimWithAttestation(attestation, signatures))
      .to.emit(f.game, "ItemClaimed")
      .withArgs(f.player.address, 1n, MIN_BALANCE);
    expect(await f.registry.collateralOf(await f.game.getAddress())).to.deep.equal(collateralBefore);
    // One item per player, whichever path it comes through.
    await expect(f.game.connect(f.player).claimWithAttestation(attestation, signatures)).to.be.revertedWithCustomError(
      f.game,
      "GameItem_AlreadyClaimed",
    );
    await expect(f.game.connect(f.player).requestVerification()).to.be.revertedWithCustomError(f.game, "GameItem_AlreadyClaimed");
  });

  it("refuses an attestation about another wallet, asset or chain, below the minimum, short of the quorum, or too old", async function () {
    const f = await loadFixture(fixture);
    const claim = (pair: Awaited<ReturnType<typeof attested>>) => f.game.connect(f.player).claimWithAttestation(...pair);
    for (const fields of [
      { owner: ethers.zeroPadValue(f.consumer.address, 32) },
      { asset: ethers.zeroPadValue(f.player.address, 32) },
      { chain: 1 as const },
    ]) {
      await expect(claim(await attested(f, fields))).to.be.revertedWithCustomError(f.game, "GameItem_WrongAttestation");
    }
    await expect(claim(await attested(f, { balance: MIN_BALANCE - 1n })))
      .to.be.revertedWithCustomError(f.game, "GameItem_BalanceTooLow")
      .withArgs(MIN_BALANCE - 1n, MIN_BALANCE);
    await expect(claim(await attested(f, {}, f.nodes.slice(0, 1))))
      .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
      .withArgs(1n, 2n);
    const old = await attested(f);
    await time.increase(MAX_RESULT_AGE + 1n);
    for (const node of f.nodes) await f.nodeRegistry.connect(node.burner)["heartbeat()"]();
    await expect(claim(old)).to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation");
  });
});
