import { expect } from "chai";
import { network } from "hardhat";

import type { BalanceAttestation, NodeSignature } from "@avn/protocol/attestation";
import { conditionHash, LICENSED_CONDITION_ATTESTATION_TYPES, ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";
import { buildBalanceProof } from "../../../src/chains/evm/balance-proof.ts";
import { queryResultHash } from "../../../src/common/query-result.ts";
import { opArtifact } from "../../../src/op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { attestationOf, domainOf, signAll } from "../../helpers/attestations.ts";
import { balanceWord, deployProtocol, E18, REQUEST_FEE } from "../../helpers/protocol.ts";
import { JobStatus } from "@avn/protocol/constants";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const MIN_BALANCE = 100n;
const MAX_RESULT_AGE = 3_600n;
/** The game's condition: some of a token on Ethereum and some of a mint on Solana, by the protocol's hash. */
const CONDITION = {
  all: [
    { chain: "ethereum", contract_address: "0x2222222222222222222222222222222222222222", min: "100" },
    { chain: "solana", token_mint_address: "So11111111111111111111111111111111111111112", min: "1" },
  ],
};
const CONDITION_HASH = conditionHash(CONDITION);

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
    CONDITION_HASH,
    ethers.ZeroAddress, // no proof claims: the proof path's fixture deploys a verifier
    0n,
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
      await expect(
        factory.deploy(...(args as [string, string, bigint, bigint]), ethers.ZeroAddress, ethers.ZeroHash, ethers.ZeroAddress, 0n),
      ).to.be.revertedWithCustomError(factory, "GameItem_ZeroArgument");
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
      ethers.ZeroHash,
      ethers.ZeroAddress,
      0n,
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

describe("GameItem (example integration): the condition path", function () {
  /** Two Solana owners: each public key's 32 bytes (what the contract takes) and its base58 spelling (what the protocol takes). */
  const SOLANA = [ethers.id("solana owner A"), ethers.id("solana owner B")].map((bytes) => ({
    bytes,
    base58: ethers.encodeBase58(bytes),
  }));

  /**
   * A verdict that `player` (with `solana`, when given) meets the game's condition, signed by `nodes` with
   * ethers' `signTypedData` over the protocol's definitions, as circuit nodes sign it.
   */
  async function verdict(
    f: Fixture,
    options: { player?: string; solana?: (typeof SOLANA)[number]; fields?: Partial<ConditionAttestation>; nodes?: Fixture["nodes"] } = {},
  ): Promise<[ConditionAttestation, NodeSignature[], string]> {
    const { player = f.player.address, solana, fields = {}, nodes = f.nodes.slice(0, 2) } = options;
    const attestation: ConditionAttestation = {
      conditionHash: CONDITION_HASH,
      ownersHash: ownersHash({ ethereum: player, solana: solana?.base58 }),
      verdict: true,
      ethereumBlock: 1_000n,
      solanaSlot: 2_000n,
      issuedAt: BigInt(await time.latest()),
      ...fields,
    };
    const domain = await domainOf(ethers, await f.attestationVerifier.getAddress());
    const types = Object.fromEntries(
      Object.entries(LICENSED_CONDITION_ATTESTATION_TYPES).map(([name, fieldList]) => [name, fieldList.map((field) => ({ ...field }))]),
    );
    const signatures = await Promise.all(
      nodes.map(async ({ burner, licenseId }) => ({
        signer: burner.address,
        licenseIds: [licenseId],
        signature: await burner.signTypedData(domain, types, { attestation, licenseIds: [licenseId] }),
      })),
    );
    return [attestation, signatures, solana?.bytes ?? ethers.ZeroHash];
  }

  it("mints one item on a true verdict about the player alone, without a job or a fee", async function () {
    const f = await loadFixture(fixture);
    expect(await f.game.CONDITION_HASH()).to.equal(CONDITION_HASH);
    const collateralBefore = await f.registry.collateralOf(await f.game.getAddress());
    const claim = await verdict(f);
    await expect(f.game.connect(f.player).claimWithCondition(...claim))
      .to.emit(f.game, "ItemClaimedWithCondition")
      .withArgs(f.player.address, 1n, ethers.ZeroHash);
    expect(await f.game.ownerOf(1n)).to.equal(f.player.address);
    expect(await f.game.hasClaimed(f.player.address)).to.equal(true);
    expect(await f.registry.collateralOf(await f.game.getAddress())).to.deep.equal(collateralBefore);
    // No Solana owner is marked: another wallet-only player still claims.
    expect(await f.game.solanaOwnerClaimed(ethers.ZeroHash)).to.equal(false);
    await expect(f.game.connect(f.consumer).claimWithCondition(...(await verdict(f, { player: f.consumer.address }))))
      .to.emit(f.game, "ItemClaimedWithCondition")
      .withArgs(f.consumer.address, 2n, ethers.ZeroHash);
    // One item per player, whichever path it comes through.
    await expect(f.game.connect(f.player).claimWithCondition(...(await verdict(f))))
      .to.be.revertedWithCustomError(f.game, "GameItem_AlreadyClaimed")
      .withArgs(f.player.address);
    await expect(f.game.connect(f.player).requestVerification()).to.be.revertedWithCustomError(f.game, "GameItem_AlreadyClaimed");
  });

  it("mints on a verdict counting a linked Solana owner, whose holdings then earn no second item from another wallet", async function () {
    const f = await loadFixture(fixture);
    const [solana] = SOLANA;
    await expect(f.game.connect(f.player).claimWithCondition(...(await verdict(f, { solana }))))
      .to.emit(f.game, "ItemClaimedWithCondition")
      .withArgs(f.player.address, 1n, solana.bytes);
    expect(await f.game.solanaOwnerClaimed(solana.bytes)).to.equal(true);
    // The Solana owner linked a second wallet too: a valid verdict about that pair, refused.
    const second = await verdict(f, { player: f.consumer.address, solana });
    expect(await f.attestationVerifier.isConditionAttestationValid(second[0], second[1], MAX_RESULT_AGE)).to.equal(true);
    await expect(f.game.connect(f.consumer).claimWithCondition(...second))
      .to.be.revertedWithCustomError(f.game, "GameItem_SolanaOwnerClaimed")
      .withArgs(solana.bytes);
    // Another Solana owner, or none, is still open to that wallet.
    await expect(f.game.connect(f.consumer).claimWithCondition(...(await verdict(f, { player: f.consumer.address, solana: SOLANA[1] }))))
      .to.emit(f.game, "ItemClaimedWithCondition")
      .withArgs(f.consumer.address, 2n, SOLANA[1].bytes);
  });

  it("refuses condition claims on a game without a condition", async function () {
    const f = await loadFixture(fixture);
    const plain = await ethers.deployContract("GameItem", [
      await f.attestationVerifier.getAddress(),
      f.requiredAsset,
      MIN_BALANCE,
      MAX_RESULT_AGE,
      ethers.ZeroAddress,
      ethers.ZeroHash,
      ethers.ZeroAddress,
      0n,
    ]);
    // Even a valid verdict about the zero condition hash.
    const claim = await verdict(f, { fields: { conditionHash: ethers.ZeroHash } });
    await expect(plain.connect(f.player).claimWithCondition(...claim)).to.be.revertedWithCustomError(plain, "GameItem_ConditionClaimsOff");
  });

  it("refuses a verdict on another condition, about other owners, or saying no", async function () {
    const f = await loadFixture(fixture);
    const claim = (args: [ConditionAttestation, NodeSignature[], string]) => f.game.connect(f.player).claimWithCondition(...args);
    const other = ethers.id("another condition");
    await expect(claim(await verdict(f, { fields: { conditionHash: other } })))
      .to.be.revertedWithCustomError(f.game, "GameItem_WrongCondition")
      .withArgs(other);
    // Another wallet's verdict; the player's own verdict with a Solana owner, claimed without it or with another.
    const [forOther, otherSignatures] = await verdict(f, { player: f.consumer.address });
    const [withSolana, solanaSignatures] = await verdict(f, { solana: SOLANA[0] });
    for (const [attestation, signatures, solanaOwner] of [
      [forOther, otherSignatures, ethers.ZeroHash],
      [withSolana, solanaSignatures, ethers.ZeroHash],
      [withSolana, solanaSignatures, SOLANA[1].bytes],
    ] as const) {
      await expect(claim([attestation, signatures, solanaOwner]))
        .to.be.revertedWithCustomError(f.game, "GameItem_WrongOwners")
        .withArgs(attestation.ownersHash);
    }
    // A valid "no": the verifier accepts it, the game does not.
    const no = await verdict(f, { fields: { verdict: false } });
    expect(await f.attestationVerifier.isConditionAttestationValid(no[0], no[1], MAX_RESULT_AGE)).to.equal(true);
    await expect(claim(no)).to.be.revertedWithCustomError(f.game, "GameItem_ConditionNotMet");
    // A "no" presented as a "yes" is not what the nodes signed.
    await expect(claim([{ ...no[0], verdict: true }, no[1], no[2]])).to.be.revertedWithCustomError(
      f.attestationVerifier,
      "AttestationVerifier_WrongSigner",
    );
    expect(await f.game.hasClaimed(f.player.address)).to.equal(false);
  });

  it("refuses a verdict word other than 0 or 1, which no quorum signs", async function () {
    const f = await loadFixture(fixture);
    const [attestation, signatures, solanaOwner] = await verdict(f);
    const data = f.game.interface.encodeFunctionData("claimWithCondition", [attestation, signatures, solanaOwner]);
    // The call with its verdict word replaced: after "0x" and the selector, conditionHash and ownersHash come first.
    const withVerdictWord = (word: bigint) => {
      const at = 2 + 8 + 2 * 64;
      return `${data.slice(0, at)}${ethers.toBeHex(word, 32).slice(2)}${data.slice(at + 64)}`;
    };
    const gameAddress = await f.game.getAddress();
    const send = (word: bigint) => f.player.sendTransaction({ to: gameAddress, data: withVerdictWord(word) });
    // The word replaced is the verdict: 0 is a "no".
    await expect(send(0n)).to.be.revertedWithCustomError(f.game, "GameItem_ConditionNotMet");
    // 2 is neither: the ABI decoder refuses it when the game reads the verdict.
    await expect(send(2n)).to.be.revertedWithoutReason(ethers);
    expect(await f.game.hasClaimed(f.player.address)).to.equal(false);
    await send(1n);
    expect(await f.game.hasClaimed(f.player.address)).to.equal(true);
  });

  it("refuses a verdict short of the quorum, or older than MAX_RESULT_AGE", async function () {
    const f = await loadFixture(fixture);
    const claim = (args: [ConditionAttestation, NodeSignature[], string]) => f.game.connect(f.player).claimWithCondition(...args);
    await expect(claim(await verdict(f, { nodes: f.nodes.slice(0, 1) })))
      .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_QuorumNotReached")
      .withArgs(1n, 2n);
    const old = await verdict(f, { solana: SOLANA[0] });
    await time.increase(MAX_RESULT_AGE + 1n);
    for (const node of f.nodes) await f.nodeRegistry.connect(node.burner)["heartbeat()"]();
    await expect(claim(old))
      .to.be.revertedWithCustomError(f.attestationVerifier, "AttestationVerifier_StaleAttestation")
      .withArgs(old[0].issuedAt, MAX_RESULT_AGE);
    // A refused claim marks nothing: the Solana owner's holdings are still unused.
    expect(await f.game.solanaOwnerClaimed(SOLANA[0].bytes)).to.equal(false);
  });
});

describe("GameItem (example integration): the proof path", function () {
  /** The OP depositor account, the only sender `L1Block.setL1BlockValues` accepts. */
  const DEPOSITOR = "0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001";
  /** OpenZeppelin's ERC20 keeps `_balances` at slot 0. */
  const BALANCES_SLOT = 0n;

  /**
   * The protocol and a game that takes storage proofs of a plain ERC-20 on this same chain: the simulated network
   * stands in for both L1 (whose block the proof is against) and L2 (whose real Bedrock `L1Block`, installed at
   * the predeploy address, reports that block). The player holds MIN_BALANCE + 1, the consumer 1.
   */
  async function proofFixture() {
    const protocol = await deployProtocol(ethers);
    const player = protocol.outsider;
    const token = await ethers.deployContract("PlainERC20", [player.address, MIN_BALANCE + 2n]);
    await token.connect(player).transfer(protocol.consumer.address, 1n);
    const l1Block = L2_PREDEPLOYS.L1Block;
    await ethers.provider.send("hardhat_setCode", [l1Block, opArtifact("L1Block").deployedBytecode]);
    await networkHelpers.impersonateAccount(DEPOSITOR);
    await networkHelpers.setBalance(DEPOSITOR, E18);
    const hashes = await ethers.deployContract("L1BlockHashes", [l1Block]);
    const proofVerifier = await ethers.deployContract("StorageProofVerifier", [await hashes.getAddress(), l1Block]);
    const game = await ethers.deployContract("GameItem", [
      await protocol.attestationVerifier.getAddress(),
      await token.getAddress(),
      MIN_BALANCE,
      MAX_RESULT_AGE,
      ethers.ZeroAddress,
      ethers.ZeroHash,
      await proofVerifier.getAddress(),
      BALANCES_SLOT,
    ]);
    return {
      ...protocol,
      player,
      token,
      hashes,
      proofVerifier,
      game,
      l1Block: await ethers.getContractAt(opArtifact("L1Block").abi, l1Block),
    };
  }

  /** A proof of `owner`'s balance at the latest block, which the L1Block is then made to report (as the depositor does). */
  async function proofOf(f: Awaited<ReturnType<typeof proofFixture>>, owner: string) {
    const block = (await ethers.provider.getBlock("latest"))!;
    const depositor = await ethers.getSigner(DEPOSITOR);
    await (f.l1Block.connect(depositor) as typeof f.l1Block).setL1BlockValues(
      block.number,
      block.timestamp,
      0n,
      block.hash,
      0n,
      ethers.ZeroHash,
      0n,
      0n,
    );
    const rpc = { request: <T>(method: string, params: unknown[]) => ethers.provider.send(method, params) as Promise<T> };
    const token = await f.token.getAddress();
    return buildBalanceProof(rpc, { token, owner, balancesSlot: BALANCES_SLOT, blockNumber: BigInt(block.number) });
  }

  it("mints one item to a player whose proof shows at least MIN_BALANCE, once", async function () {
    const f = await loadFixture(proofFixture);
    const proof = await proofOf(f, f.player.address);
    await expect(f.game.connect(f.player).claimWithProof(BALANCES_SLOT, proof.encoded))
      .to.emit(f.game, "ItemClaimed")
      .withArgs(f.player.address, 1n, MIN_BALANCE + 1n);
    expect(await f.game.ownerOf(1n)).to.equal(f.player.address);
    await expect(f.game.connect(f.player).claimWithProof(BALANCES_SLOT, (await proofOf(f, f.player.address)).encoded))
      .to.be.revertedWithCustomError(f.game, "GameItem_AlreadyClaimed")
      .withArgs(f.player.address);
  });

  it("refuses a balance below MIN_BALANCE, another player's proof, another balances slot, and a stale block", async function () {
    const f = await loadFixture(proofFixture);
    const low = await proofOf(f, f.consumer.address);
    await expect(f.game.connect(f.consumer).claimWithProof(BALANCES_SLOT, low.encoded))
      .to.be.revertedWithCustomError(f.game, "GameItem_BalanceTooLow")
      .withArgs(1n, MIN_BALANCE);
    // A non-holder's exclusion proof: a balance of 0, below MIN_BALANCE.
    const [nobody] = await ethers.getSigners();
    const none = await proofOf(f, nobody.address);
    await expect(f.game.connect(nobody).claimWithProof(BALANCES_SLOT, none.encoded))
      .to.be.revertedWithCustomError(f.game, "GameItem_BalanceTooLow")
      .withArgs(0n, MIN_BALANCE);
    // The player's proof, sent by someone else: the verifier derives the key from the sender, so it proves nothing.
    const players = await proofOf(f, f.player.address);
    const refusal = await f.game
      .connect(f.consumer)
      .claimWithProof(BALANCES_SLOT, players.encoded)
      .then(
        () => "no revert",
        (error: { data?: string }) => f.proofVerifier.interface.parseError(error.data!)?.name,
      );
    expect(refusal).to.be.oneOf(["StorageProofVerifier_SlotProofInvalid", "StorageProofVerifier_InclusionClaimMismatch"]);
    await expect(f.game.connect(f.player).claimWithProof(2n, players.encoded))
      .to.be.revertedWithCustomError(f.game, "GameItem_WrongBalancesSlot")
      .withArgs(2n, BALANCES_SLOT);
    await time.increase(MAX_RESULT_AGE + 1n);
    await expect(f.game.connect(f.player).claimWithProof(BALANCES_SLOT, players.encoded)).to.be.revertedWithCustomError(
      f.proofVerifier,
      "StorageProofVerifier_StaleHeader",
    );
  });

  it("keeps a recorded L1 block verifiable after L1Block moves on, names the latest record, and refuses unknown blocks and malformed proofs", async function () {
    const f = await loadFixture(proofFixture);
    const { hashes, proofVerifier } = f;
    // Before any L1 block reaches the L2, there is nothing to record.
    await expect(hashes.record()).to.be.revertedWithCustomError(hashes, "L1BlockHashes_NoL1Block");
    const token = await f.token.getAddress();
    const proof = await proofOf(f, f.player.address);
    expect((await hashes.current())[1]).to.equal(proof.blockHash);
    await expect(hashes.record()).to.emit(hashes, "L1BlockRecorded");
    expect((await hashes.hashOf(proof.blockNumber))[0]).to.equal(proof.blockHash);
    expect((await hashes.latest())[0]).to.equal(proof.blockNumber);
    // L1Block moves on twice: the recorded block still verifies, the one in between (never recorded) does not.
    const between = await proofOf(f, f.player.address);
    await proofOf(f, f.player.address);
    const [balance, l1BlockNumber] = await proofVerifier.verifyBalance(
      token,
      f.player.address,
      BALANCES_SLOT,
      MAX_RESULT_AGE,
      proof.encoded,
    );
    expect([balance, l1BlockNumber]).to.deep.equal([MIN_BALANCE + 1n, proof.blockNumber]);
    await expect(proofVerifier.verifyBalance(token, f.player.address, BALANCES_SLOT, MAX_RESULT_AGE, between.encoded))
      .to.be.revertedWithCustomError(proofVerifier, "StorageProofVerifier_UnknownBlock")
      .withArgs(between.blockNumber);
    await expect(
      proofVerifier.verifyBalance(token, f.player.address, BALANCES_SLOT, MAX_RESULT_AGE, "0x1234"),
    ).to.be.revertedWithCustomError(proofVerifier, "StorageProofVerifier_MalformedProof");
    const garbage = ethers.AbiCoder.defaultAbiCoder().encode(
      ["tuple(bytes,bytes[],tuple(bool,bytes[])[],tuple(bytes,bytes[],bytes[]))"],
      [["0xc0", [], [], ["0x", [], []]]],
    );
    await expect(
      proofVerifier.verifyBalance(token, f.player.address, BALANCES_SLOT, MAX_RESULT_AGE, garbage),
    ).to.be.revertedWithCustomError(proofVerifier, "StorageProofVerifier_MalformedHeader");
    await expect(ethers.deployContract("L1BlockHashes", [ethers.ZeroAddress])).to.be.revertedWithCustomError(
      hashes,
      "L1BlockHashes_ZeroAddress",
    );
  });

  it("refuses proof claims on a game without a proof verifier", async function () {
    const f = await loadFixture(fixture);
    await expect(f.game.connect(f.player).claimWithProof(0n, "0x")).to.be.revertedWithCustomError(f.game, "GameItem_ProofClaimsOff");
  });
});
