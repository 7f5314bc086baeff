import { expect } from "chai";
import { network } from "hardhat";

import { signPermit } from "../../../src/tokens/permit.ts";
import { TOTAL_SUPPLY } from "../../helpers/tokens.ts";

const { ethers, networkHelpers } = await network.create();

describe("PrimaryToken", function () {
  async function deploy() {
    const [treasury, alice, bob] = await ethers.getSigners();
    const token = await ethers.deployContract("PrimaryToken", ["Verification Network", "VNT", treasury.address]);
    return { token, treasury, alice, bob };
  }

  describe("deployment", function () {
    it("mints exactly 1e9 tokens of 18 decimals to the recipient, once", async function () {
      const { token, treasury } = await networkHelpers.loadFixture(deploy);
      expect(await token.name()).to.equal("Verification Network");
      expect(await token.symbol()).to.equal("VNT");
      expect(await token.decimals()).to.equal(18n);
      expect(await token.TOTAL_SUPPLY()).to.equal(TOTAL_SUPPLY);
      expect(await token.totalSupply()).to.equal(TOTAL_SUPPLY);
      expect(await token.balanceOf(treasury.address)).to.equal(TOTAL_SUPPLY);
    });

    it("refuses a zero recipient", async function () {
      const factory = await ethers.getContractFactory("PrimaryToken");
      await expect(factory.deploy("N", "S", ethers.ZeroAddress))
        .to.be.revertedWithCustomError(factory, "ERC20InvalidReceiver")
        .withArgs(ethers.ZeroAddress);
    });

    it("has no mint, burn, owner, pause or role function", async function () {
      const { token } = await networkHelpers.loadFixture(deploy);
      const names: string[] = [];
      token.interface.forEachFunction((fragment) => names.push(fragment.name.toLowerCase()));
      for (const power of ["mint", "burn", "owner", "pause", "grantrole", "transferownership", "upgrade"]) {
        expect(
          names.filter((name) => name.includes(power)),
          power,
        ).to.deep.equal([]);
      }
    });
  });

  describe("permit", function () {
    type Signer = Awaited<ReturnType<typeof ethers.getSigners>>[number];
    type Token = Awaited<ReturnType<typeof deploy>>["token"];

    /** A permit for `value` from `owner` to `spender`, signed by `signer` (the owner unless forging). */
    async function permitFor(token: Token, owner: Signer, spender: string, value: bigint, deadline: bigint, signer = owner) {
      const nonce = await token.nonces(owner.address);
      const { chainId } = await ethers.provider.getNetwork();
      return signPermit(signer, token, chainId, { owner: owner.address, spender, value, nonce, deadline });
    }

    it("sets the allowance from a signature, then transferFrom spends it", async function () {
      const { token, treasury, alice, bob } = await networkHelpers.loadFixture(deploy);
      const deadline = BigInt(await networkHelpers.time.latest()) + 3600n;
      const { v, r, s } = await permitFor(token, treasury, alice.address, 500n, deadline);

      await expect(token.connect(alice).permit(treasury.address, alice.address, 500n, deadline, v, r, s))
        .to.emit(token, "Approval")
        .withArgs(treasury.address, alice.address, 500n);
      expect(await token.nonces(treasury.address)).to.equal(1n);

      await token.connect(alice).transferFrom(treasury.address, bob.address, 500n);
      expect(await token.balanceOf(bob.address)).to.equal(500n);
      expect(await token.allowance(treasury.address, alice.address)).to.equal(0n);
    });

    it("refuses a replayed signature", async function () {
      const { token, treasury, alice } = await networkHelpers.loadFixture(deploy);
      const deadline = BigInt(await networkHelpers.time.latest()) + 3600n;
      const { v, r, s } = await permitFor(token, treasury, alice.address, 500n, deadline);
      await token.permit(treasury.address, alice.address, 500n, deadline, v, r, s);
      await expect(token.permit(treasury.address, alice.address, 500n, deadline, v, r, s)).to.be.revertedWithCustomError(
        token,
        "ERC2612InvalidSigner",
      );
    });

    it("refuses a signature past its deadline", async function () {
      const { token, treasury, alice } = await networkHelpers.loadFixture(deploy);
      const deadline = BigInt(await networkHelpers.time.latest()) + 10n;
      const { v, r, s } = await permitFor(token, treasury, alice.address, 500n, deadline);
      await networkHelpers.time.increase(60);
      await expect(token.permit(treasury.address, alice.address, 500n, deadline, v, r, s))
        .to.be.revertedWithCustomError(token, "ERC2612ExpiredSignature")
        .withArgs(deadline);
    });

    it("refuses a signature by someone other than the owner", async function () {
      const { token, treasury, alice } = await networkHelpers.loadFixture(deploy);
      const deadline = BigInt(await networkHelpers.time.latest()) + 3600n;
      // Alice signs a permit that claims to come from the treasury.
      const forged = await permitFor(token, treasury, alice.address, 1n, deadline, alice);
      await expect(token.permit(treasury.address, alice.address, 1n, deadline, forged.v, forged.r, forged.s))
        .to.be.revertedWithCustomError(token, "ERC2612InvalidSigner")
        .withArgs(alice.address, treasury.address);
    });
  });

  describe("votes", function () {
    it("counts voting power only after delegation and moves it with transfers", async function () {
      const { token, treasury, alice, bob } = await networkHelpers.loadFixture(deploy);
      expect(await token.getVotes(treasury.address)).to.equal(0n);

      await expect(token.connect(treasury).delegate(treasury.address))
        .to.emit(token, "DelegateChanged")
        .withArgs(treasury.address, ethers.ZeroAddress, treasury.address);
      expect(await token.getVotes(treasury.address)).to.equal(TOTAL_SUPPLY);

      await token.connect(alice).delegate(bob.address);
      await token.connect(treasury).transfer(alice.address, 1_000n);
      expect(await token.getVotes(treasury.address)).to.equal(TOTAL_SUPPLY - 1_000n);
      expect(await token.getVotes(bob.address)).to.equal(1_000n);
      expect(await token.delegates(alice.address)).to.equal(bob.address);
    });

    it("keeps checkpoints readable in the past (block-number clock)", async function () {
      const { token, treasury, alice } = await networkHelpers.loadFixture(deploy);
      await token.connect(treasury).delegate(treasury.address);
      const before = await ethers.provider.getBlockNumber();
      await token.connect(treasury).transfer(alice.address, 7n);
      await networkHelpers.mine(1);

      expect(await token.CLOCK_MODE()).to.equal("mode=blocknumber&from=default");
      expect(await token.getPastVotes(treasury.address, before)).to.equal(TOTAL_SUPPLY);
      expect(await token.getPastVotes(treasury.address, before + 1)).to.equal(TOTAL_SUPPLY - 7n);
      expect(await token.getPastTotalSupply(before)).to.equal(TOTAL_SUPPLY);
    });
  });
});
