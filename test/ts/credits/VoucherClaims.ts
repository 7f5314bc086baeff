import { expect } from "chai";
import { network } from "hardhat";
import { hashTypedData, type Address, type Hex } from "viem";

import { creditsDomain, VOUCHER_TYPES, type Voucher } from "@avn/protocol/credits/typed-data";
import { deployProtocol, E18 } from "../../helpers/protocol.ts";
import { ItemKind } from "@avn/protocol/constants";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const ITEM = { primary: 1n, staked: 2n, license: 3n, game: 4n } as const;

/**
 * The claim platform with every kind of item the catalogue sells: primary tokens and staked tokens from an
 * inventory of primary tokens, node licenses from an inventory of licenses, and game items it mints.
 */
async function fixture() {
  const protocol = await deployProtocol(ethers);
  const signers = await ethers.getSigners();
  const [operator, issuer, buyer, other, newIssuer] = signers.slice(11, 16);
  const claims = await ethers.deployContract("VoucherClaims", [issuer.address, operator.address, protocol.admin.address, 0n]);
  const claimsAddress = await claims.getAddress();
  const game = await ethers.deployContract("GameItem", [
    await protocol.attestationVerifier.getAddress(),
    other.address,
    1n,
    3_600n,
    claimsAddress,
    ethers.ZeroHash, // no condition claims
    ethers.ZeroAddress, // no proof claims
    0n,
  ]);
  await claims.connect(operator).setItem(ITEM.primary, { kind: ItemKind.Transfer, asset: await protocol.primary.getAddress() });
  await claims.connect(operator).setItem(ITEM.staked, { kind: ItemKind.StakeFor, asset: await protocol.staked.getAddress() });
  await claims.connect(operator).setItem(ITEM.license, { kind: ItemKind.NftInventory, asset: await protocol.license.getAddress() });
  await claims.connect(operator).setItem(ITEM.game, { kind: ItemKind.Mint, asset: await game.getAddress() });
  // The operator stocks the inventory: primary tokens, and two licenses sent with safeTransferFrom.
  await protocol.primary.connect(protocol.treasury).transfer(claimsAddress, 1_000n * E18);
  await protocol.license.connect(protocol.alice).buy(2n, ethers.MaxUint256); // ids 4 and 5
  for (const id of [4n, 5n])
    await protocol.license.connect(protocol.alice)["safeTransferFrom(address,address,uint256)"](protocol.alice.address, claimsAddress, id);
  const { chainId } = await ethers.provider.getNetwork();
  const domain = creditsDomain(chainId, claimsAddress as Address);
  let next = 1;
  /** A voucher of `fields` over defaults (the buyer, 10 primary tokens, a day), signed by `signer`. */
  const voucher = async (fields: Partial<Voucher> = {}, signer = issuer, signingDomain = domain) => {
    const value: Voucher = {
      recipient: buyer.address as Address,
      itemId: ITEM.primary,
      amount: 10n * E18,
      voucherId: ethers.zeroPadValue(ethers.toBeHex(next++), 32) as Hex,
      expiry: BigInt(await time.latest()) + 86_400n,
      ...fields,
    };
    const signature = await signer.signTypedData(signingDomain, { Voucher: [...VOUCHER_TYPES.Voucher] }, value);
    return { value, signature };
  };
  return { ...protocol, claims, claimsAddress, game, operator, issuer, buyer, other, newIssuer, domain, voucher, chainId };
}

describe("VoucherClaims: the credits channel's claim platform", function () {
  it("computes the digest the credits service signs, field for field", async function () {
    const f = await loadFixture(fixture);
    const { value } = await f.voucher();
    expect(await f.claims.hashVoucher(value)).to.equal(
      hashTypedData({ domain: f.domain, types: VOUCHER_TYPES, primaryType: "Voucher", message: value }),
    );
    expect(await f.claims.VOUCHER_TYPEHASH()).to.equal(
      ethers.id("Voucher(address recipient,uint256 itemId,uint256 amount,bytes32 voucherId,uint64 expiry)"),
    );
  });

  it("delivers each kind of item to the voucher's recipient: tokens, staked tokens, licenses, minted game items", async function () {
    const f = await loadFixture(fixture);
    const primary = await f.voucher({ itemId: ITEM.primary, amount: 10n * E18 });
    await expect(f.claims.connect(f.buyer).claim(primary.value, primary.signature))
      .to.emit(f.claims, "VoucherClaimed")
      .withArgs(primary.value.voucherId, f.buyer.address, ITEM.primary, 10n * E18);
    expect(await f.primary.balanceOf(f.buyer.address)).to.equal(10n * E18);

    const staked = await f.voucher({ itemId: ITEM.staked, amount: 5n * E18 });
    await f.claims.connect(f.buyer).claim(staked.value, staked.signature);
    expect(await f.staked.balanceOf(f.buyer.address)).to.equal(5n * E18);
    expect(await f.primary.balanceOf(f.claimsAddress)).to.equal(985n * E18);

    const license = await f.voucher({ itemId: ITEM.license, amount: 2n });
    await f.claims.connect(f.buyer).claim(license.value, license.signature);
    expect([await f.license.ownerOf(4n), await f.license.ownerOf(5n)]).to.deep.equal([f.buyer.address, f.buyer.address]);

    const game = await f.voucher({ itemId: ITEM.game, amount: 3n });
    await f.claims.connect(f.buyer).claim(game.value, game.signature);
    expect(await f.game.balanceOf(f.buyer.address)).to.equal(3n);
    expect(await f.claims.isClaimed(game.value.voucherId)).to.equal(true);
  });

  it("refuses a second claim, another recipient, an expired voucher and a paused platform", async function () {
    const f = await loadFixture(fixture);
    const { value, signature } = await f.voucher();
    await expect(f.claims.connect(f.other).claim(value, signature))
      .to.be.revertedWithCustomError(f.claims, "VoucherClaims_NotRecipient")
      .withArgs(f.other.address, f.buyer.address);
    await f.claims.connect(f.buyer).claim(value, signature);
    await expect(f.claims.connect(f.buyer).claim(value, signature))
      .to.be.revertedWithCustomError(f.claims, "VoucherClaims_AlreadyClaimed")
      .withArgs(value.voucherId);

    // Claimable up to and including its expiry second, not one second after.
    const last = await f.voucher({ expiry: BigInt(await time.latest()) + 10n });
    await time.setNextBlockTimestamp(last.value.expiry);
    await f.claims.connect(f.buyer).claim(last.value, last.signature);
    const late = await f.voucher({ expiry: BigInt(await time.latest()) + 10n });
    await time.increase(11);
    await expect(f.claims.connect(f.buyer).claim(late.value, late.signature))
      .to.be.revertedWithCustomError(f.claims, "VoucherClaims_Expired")
      .withArgs(late.value.expiry);

    const paused = await f.voucher();
    await f.claims.connect(f.operator).pause();
    await expect(f.claims.connect(f.buyer).claim(paused.value, paused.signature)).to.be.revertedWithCustomError(f.claims, "EnforcedPause");
    await expect(f.claims.connect(f.operator).unpause()).to.be.revertedWithCustomError(f.claims, "AccessControlUnauthorizedAccount");
    await f.claims.connect(f.admin).unpause();
    await f.claims.connect(f.buyer).claim(paused.value, paused.signature);
    expect(await f.primary.balanceOf(f.buyer.address)).to.equal(30n * E18);
  });

  it("refuses a voucher signed for another chain or contract, by another key, altered, or with a malleable signature", async function () {
    const f = await loadFixture(fixture);
    const otherChain = await f.voucher({}, f.issuer, creditsDomain(f.chainId + 1n, f.claimsAddress as Address));
    const otherContract = await f.voucher({}, f.issuer, creditsDomain(f.chainId, f.other.address as Address));
    const otherKey = await f.voucher({}, f.other);
    for (const { value, signature } of [otherChain, otherContract, otherKey]) {
      await expect(f.claims.connect(f.buyer).claim(value, signature)).to.be.revertedWithCustomError(
        f.claims,
        "VoucherClaims_InvalidSignature",
      );
    }
    const honest = await f.voucher();
    await expect(
      f.claims.connect(f.buyer).claim({ ...honest.value, amount: honest.value.amount * 2n }, honest.signature),
    ).to.be.revertedWithCustomError(f.claims, "VoucherClaims_InvalidSignature");
    const parsed = ethers.Signature.from(honest.signature);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const twin = ethers.concat([parsed.r, ethers.toBeHex(n - BigInt(parsed.s), 32), ethers.toBeHex(parsed.v === 27 ? 28 : 27, 1)]);
    await expect(f.claims.connect(f.buyer).claim(honest.value, twin)).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_InvalidSignature",
    );
    await expect(f.claims.connect(f.buyer).claim(honest.value, "0x1234")).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_InvalidSignature",
    );
  });

  it("refuses vouchers of a rotated-out issuer key, and takes the new key's", async function () {
    const f = await loadFixture(fixture);
    const old = await f.voucher();
    await expect(f.claims.connect(f.operator).setIssuer(f.newIssuer.address)).to.be.revertedWithCustomError(
      f.claims,
      "AccessControlUnauthorizedAccount",
    );
    await expect(f.claims.connect(f.admin).setIssuer(f.newIssuer.address))
      .to.emit(f.claims, "IssuerUpdated")
      .withArgs(f.issuer.address, f.newIssuer.address);
    await expect(f.claims.connect(f.buyer).claim(old.value, old.signature)).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_InvalidSignature",
    );
    const fresh = await f.voucher({}, f.newIssuer);
    await f.claims.connect(f.buyer).claim(fresh.value, fresh.signature);
    await expect(f.claims.connect(f.admin).setIssuer(ethers.ZeroAddress)).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_ZeroAddress",
    );
  });

  it("refuses an unknown item, a zero amount and more tokens than a voucher may carry, changing nothing", async function () {
    const f = await loadFixture(fixture);
    for (const [fields, error] of [
      [{ itemId: 99n }, "VoucherClaims_UnknownItem"],
      [{ amount: 0n }, "VoucherClaims_InvalidAmount"],
      [{ itemId: ITEM.game, amount: 21n }, "VoucherClaims_InvalidAmount"],
      [{ itemId: ITEM.license, amount: 3n }, "ERC721OutOfBoundsIndex"],
    ] as const) {
      const { value, signature } = await f.voucher(fields);
      const target = error === "ERC721OutOfBoundsIndex" ? f.license : f.claims;
      await expect(f.claims.connect(f.buyer).claim(value, signature)).to.be.revertedWithCustomError(target, error);
      expect(await f.claims.isClaimed(value.voucherId)).to.equal(false);
    }
  });

  it("lets only the operator define items and take inventory back, with events", async function () {
    const f = await loadFixture(fixture);
    const primary = await f.primary.getAddress();
    await expect(f.claims.connect(f.buyer).setItem(9n, { kind: ItemKind.Transfer, asset: primary })).to.be.revertedWithCustomError(
      f.claims,
      "AccessControlUnauthorizedAccount",
    );
    await expect(f.claims.connect(f.operator).setItem(9n, { kind: ItemKind.None, asset: primary })).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_InvalidItem",
    );
    await expect(
      f.claims.connect(f.operator).setItem(9n, { kind: ItemKind.Transfer, asset: ethers.ZeroAddress }),
    ).to.be.revertedWithCustomError(f.claims, "VoucherClaims_InvalidItem");
    await expect(f.claims.connect(f.operator).setItem(9n, { kind: ItemKind.Transfer, asset: primary }))
      .to.emit(f.claims, "ItemSet")
      .withArgs(9n, [BigInt(ItemKind.Transfer), primary]);
    expect(await f.claims.itemOf(9n)).to.deep.equal([BigInt(ItemKind.Transfer), primary]);
    // An item is defined once: outstanding vouchers for it can never be paid in another asset.
    await expect(f.claims.connect(f.operator).setItem(9n, { kind: ItemKind.Transfer, asset: await f.staked.getAddress() }))
      .to.be.revertedWithCustomError(f.claims, "VoucherClaims_ItemDefined")
      .withArgs(9n);

    await expect(f.claims.connect(f.buyer).withdrawInventory(primary, f.buyer.address, 1n)).to.be.revertedWithCustomError(
      f.claims,
      "AccessControlUnauthorizedAccount",
    );
    await expect(f.claims.connect(f.operator).withdrawInventory(primary, ethers.ZeroAddress, 1n)).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_ZeroAddress",
    );
    await expect(f.claims.connect(f.operator).withdrawInventory(primary, f.operator.address, 100n * E18))
      .to.emit(f.claims, "InventoryWithdrawn")
      .withArgs(primary, f.operator.address, 100n * E18);
    expect(await f.primary.balanceOf(f.operator.address)).to.equal(100n * E18);
    const license = await f.license.getAddress();
    await expect(f.claims.connect(f.buyer).withdrawNft(license, f.buyer.address, 4n)).to.be.revertedWithCustomError(
      f.claims,
      "AccessControlUnauthorizedAccount",
    );
    await expect(f.claims.connect(f.operator).withdrawNft(license, ethers.ZeroAddress, 4n)).to.be.revertedWithCustomError(
      f.claims,
      "VoucherClaims_ZeroAddress",
    );
    await expect(f.claims.connect(f.operator).withdrawNft(license, f.operator.address, 4n))
      .to.emit(f.claims, "NftWithdrawn")
      .withArgs(license, f.operator.address, 4n);
    expect(await f.license.ownerOf(4n)).to.equal(f.operator.address);
    await expect(f.claims.connect(f.buyer).pause()).to.be.revertedWithCustomError(f.claims, "AccessControlUnauthorizedAccount");
    await f.claims.connect(f.admin).pause();
    expect(await f.claims.paused()).to.equal(true);
  });

  it("lets a contract wallet without a receiver hook claim licenses, and no item contract claim twice from inside a claim", async function () {
    const f = await loadFixture(fixture);
    // A contract that claims for itself (it is the recipient) and has no onERC721Received.
    const wallet = await ethers.deployContract("ReentrantMinter", [f.claimsAddress]);
    const walletAddress = (await wallet.getAddress()) as Address;
    const license = await f.voucher({ recipient: walletAddress, itemId: ITEM.license, amount: 1n });
    await ethers.provider.send("hardhat_impersonateAccount", [walletAddress]);
    await ethers.provider.send("hardhat_setBalance", [walletAddress, "0xDE0B6B3A7640000"]);
    await f.claims.connect(await ethers.getSigner(walletAddress)).claim(license.value, license.signature);
    expect(await f.license.ownerOf(4n)).to.equal(walletAddress);

    // An item contract that, asked to mint, tries to claim another voucher made out to itself.
    await f.claims.connect(f.operator).setItem(7n, { kind: ItemKind.Mint, asset: walletAddress });
    const inner = await f.voucher({ recipient: walletAddress, itemId: ITEM.primary });
    await wallet.arm(inner.value, inner.signature);
    const outer = await f.voucher({ itemId: 7n, amount: 1n });
    await f.claims.connect(f.buyer).claim(outer.value, outer.signature);
    expect(await wallet.minted()).to.equal(1n);
    expect(await wallet.reentryError()).to.equal(f.claims.interface.getError("ReentrancyGuardReentrantCall")!.selector);
    expect(await f.claims.isClaimed(inner.value.voucherId)).to.equal(false);
  });

  it("refuses zero addresses at deployment", async function () {
    const f = await loadFixture(fixture);
    const factory = await ethers.getContractFactory("VoucherClaims");
    await expect(factory.deploy(ethers.ZeroAddress, f.operator.address, f.admin.address, 0n)).to.be.revertedWithCustomError(
      factory,
      "VoucherClaims_ZeroAddress",
    );
    await expect(factory.deploy(f.issuer.address, ethers.ZeroAddress, f.admin.address, 0n)).to.be.revertedWithCustomError(
      factory,
      "VoucherClaims_ZeroAddress",
    );
  });
});
