import { expect } from "chai";
import { network } from "hardhat";

import { deployProtocol, E18, MAX_SUPPLY, PRICE_TIERS } from "../../helpers/protocol.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture } = networkHelpers;
const fixture = () => deployProtocol(ethers);

describe("NodeLicense", function () {
  describe("deployment", function () {
    it("stores its parameters", async function () {
      const { license, primary, treasury, admin } = await loadFixture(fixture);
      expect(await license.PAYMENT_TOKEN()).to.equal(await primary.getAddress());
      expect(await license.treasury()).to.equal(treasury.address);
      expect(await license.MAX_SUPPLY()).to.equal(MAX_SUPPLY);
      expect(await license.defaultAdmin()).to.equal(admin.address);
      expect((await license.priceTiers()).map((tier) => [tier.upToSupply, tier.price])).to.deep.equal(
        PRICE_TIERS.map((tier) => [tier.upToSupply, tier.price]),
      );
    });

    it("refuses invalid constructor arguments", async function () {
      const { primary, treasury, admin } = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("NodeLicense");
      const args = ["N", "N", await primary.getAddress(), treasury.address, MAX_SUPPLY, PRICE_TIERS, admin.address, 0n] as const;
      await expect(
        factory.deploy(args[0], args[1], ethers.ZeroAddress, args[3], args[4], args[5], args[6], args[7]),
      ).to.be.revertedWithCustomError(factory, "NodeLicense_ZeroAddress");
      await expect(
        factory.deploy(args[0], args[1], args[2], ethers.ZeroAddress, args[4], args[5], args[6], args[7]),
      ).to.be.revertedWithCustomError(factory, "NodeLicense_ZeroAddress");
      // Tiers that stop below the maximum supply.
      await expect(
        factory.deploy(args[0], args[1], args[2], args[3], MAX_SUPPLY + 1n, args[5], args[6], args[7]),
      ).to.be.revertedWithCustomError(factory, "NodeLicense_InvalidPriceTiers");
    });

    it("supports the ERC-721, enumerable, metadata and access-control interfaces", async function () {
      const { license } = await loadFixture(fixture);
      for (const id of ["0x80ac58cd", "0x780e9d63", "0x5b5e139f", "0x7965db0b", "0x01ffc9a7"]) {
        expect(await license.supportsInterface(id), id).to.equal(true);
      }
      expect(await license.supportsInterface("0xffffffff")).to.equal(false);
    });
  });

  describe("quote and buy", function () {
    it("prices each license by the tier of its sale number, across tier boundaries", async function () {
      const { license } = await loadFixture(fixture);
      // Three are sold by the fixture: licenses 4..10 cost 100, 11..13 cost 200.
      expect(await license.totalMinted()).to.equal(3n);
      expect(await license.quote(1n)).to.equal(100n * E18);
      expect(await license.quote(7n)).to.equal(700n * E18);
      expect(await license.quote(10n)).to.equal(700n * E18 + 3n * 200n * E18);
      expect(await license.quote(100n)).to.equal(700n * E18 + 90n * 200n * E18 + 3n * 500n * E18);
    });

    it("buys consecutive ids, pays the treasury and emits the purchase", async function () {
      const { license, primary, treasury, alice } = await loadFixture(fixture);
      const price = await license.quote(10n);
      const treasuryBefore = await primary.balanceOf(treasury.address);
      await expect(license.connect(alice).buy(10n, price))
        .to.emit(license, "LicensesPurchased")
        .withArgs(alice.address, 4n, 10n, price)
        .and.to.emit(license, "Transfer")
        .withArgs(ethers.ZeroAddress, alice.address, 13n);
      expect(await primary.balanceOf(treasury.address)).to.equal(treasuryBefore + price);
      expect(await license.balanceOf(alice.address)).to.equal(11n);
      expect(await license.ownerOf(13n)).to.equal(alice.address);
      expect(await license.tokenOfOwnerByIndex(alice.address, 1n)).to.equal(4n);
      expect(await license.quote(1n)).to.equal(200n * E18);
    });

    it("refuses a purchase when the price is above the buyer's limit", async function () {
      const { license, alice } = await loadFixture(fixture);
      const price = await license.quote(10n);
      await expect(license.connect(alice).buy(10n, price - 1n))
        .to.be.revertedWithCustomError(license, "NodeLicense_PriceAboveLimit")
        .withArgs(price, price - 1n);
    });

    it("refuses a quantity of zero or above the maximum per mint", async function () {
      const { license, alice } = await loadFixture(fixture);
      for (const quantity of [0n, 101n]) {
        await expect(license.connect(alice).buy(quantity, ethers.MaxUint256))
          .to.be.revertedWithCustomError(license, "NodeLicense_InvalidQuantity")
          .withArgs(quantity, 100n);
      }
    });

    it("refuses a purchase beyond the maximum supply", async function () {
      const { license, admin } = await loadFixture(fixture);
      for (let i = 0; i < 9; i++) await license.connect(admin).airdrop(admin.address, 100n);
      expect(await license.totalMinted()).to.equal(903n);
      await license.connect(admin).airdrop(admin.address, 97n);
      await expect(license.connect(admin).buy(1n, ethers.MaxUint256))
        .to.be.revertedWithCustomError(license, "NodeLicense_MaxSupplyExceeded")
        .withArgs(1000n, 1n, MAX_SUPPLY);
    });

    it("refuses a purchase whose payment is not approved", async function () {
      const { license, primary, alice } = await loadFixture(fixture);
      await primary.connect(alice).approve(await license.getAddress(), 0n);
      await expect(license.connect(alice).buy(1n, ethers.MaxUint256)).to.be.revertedWithCustomError(primary, "ERC20InsufficientAllowance");
    });

    it("sells for free in a zero-price tier without touching the payment token", async function () {
      const { license, admin, outsider, primary } = await loadFixture(fixture);
      await license.connect(admin).setPriceTiers([{ upToSupply: MAX_SUPPLY, price: 0n }]);
      await primary.connect(outsider).approve(await license.getAddress(), 0n);
      await expect(license.connect(outsider).buy(2n, 0n)).to.emit(license, "LicensesPurchased").withArgs(outsider.address, 4n, 2n, 0n);
    });
  });

  describe("airdrop", function () {
    it("mints for free to the recipient", async function () {
      const { license, admin, outsider } = await loadFixture(fixture);
      await expect(license.connect(admin).airdrop(outsider.address, 5n))
        .to.emit(license, "LicensesAirdropped")
        .withArgs(outsider.address, 4n, 5n);
      expect(await license.balanceOf(outsider.address)).to.equal(5n);
    });

    it("refuses an airdrop by a non-admin or to the zero address", async function () {
      const { license, admin, alice } = await loadFixture(fixture);
      await expect(license.connect(alice).airdrop(alice.address, 1n))
        .to.be.revertedWithCustomError(license, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ethers.ZeroHash);
      await expect(license.connect(admin).airdrop(ethers.ZeroAddress, 1n)).to.be.revertedWithCustomError(
        license,
        "NodeLicense_ZeroAddress",
      );
    });
  });

  describe("the node registry hears of every change of hands", function () {
    it("a transfer ends the license's delegation there, with an event; a license without one transfers quietly", async function () {
      const { license, nodeRegistry, alice, bob, burnerA } = await loadFixture(fixture);
      expect(await license.nodeRegistry()).to.equal(await nodeRegistry.getAddress());
      await expect(license.connect(alice).transferFrom(alice.address, bob.address, 1n))
        .to.emit(nodeRegistry, "DelegationVoided")
        .withArgs(1n, burnerA.address);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(ethers.ZeroAddress);
      await expect(license.connect(bob).transferFrom(bob.address, alice.address, 1n)).to.not.emit(nodeRegistry, "DelegationVoided");
    });

    it("refuses setting the node registry twice, to zero, or by a non-admin", async function () {
      const { license, nodeRegistry, admin, alice } = await loadFixture(fixture);
      await expect(license.connect(admin).setNodeRegistry(alice.address))
        .to.be.revertedWithCustomError(license, "NodeLicense_NodeRegistryAlreadySet")
        .withArgs(await nodeRegistry.getAddress());
      const fresh = await ethers.deployContract("NodeLicense", [
        "L",
        "L",
        await license.PAYMENT_TOKEN(),
        admin.address,
        10n,
        [{ upToSupply: 10n, price: 1n }],
        admin.address,
        0n,
      ]);
      await expect(fresh.connect(admin).setNodeRegistry(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        fresh,
        "NodeLicense_ZeroAddress",
      );
      await expect(fresh.connect(alice).setNodeRegistry(alice.address))
        .to.be.revertedWithCustomError(fresh, "AccessControlUnauthorizedAccount")
        .withArgs(alice.address, ethers.ZeroHash);
      await expect(fresh.connect(admin).setNodeRegistry(alice.address)).to.emit(fresh, "NodeRegistrySet").withArgs(alice.address);
    });

    it("licenses move freely before a registry is named (none can be delegated until then)", async function () {
      const { license, admin, alice, bob } = await loadFixture(fixture);
      const fresh = await ethers.deployContract("NodeLicense", [
        "L",
        "L",
        await license.PAYMENT_TOKEN(),
        admin.address,
        10n,
        [{ upToSupply: 10n, price: 0n }],
        admin.address,
        0n,
      ]);
      await fresh.connect(admin).airdrop(alice.address, 1n);
      await fresh.connect(alice).transferFrom(alice.address, bob.address, 1n);
      expect(await fresh.ownerOf(1n)).to.equal(bob.address);
    });
  });

  describe("governance setters", function () {
    it("setPriceTiers replaces the tiers and emits old and new", async function () {
      const { license, admin } = await loadFixture(fixture);
      const next = [{ upToSupply: 2000n, price: 1n }];
      await expect(license.connect(admin).setPriceTiers(next))
        .to.emit(license, "PriceTiersUpdated")
        .withArgs(
          PRICE_TIERS.map((tier) => [tier.upToSupply, tier.price]),
          next.map((tier) => [tier.upToSupply, tier.price]),
        );
      expect(await license.quote(3n)).to.equal(3n);
    });

    const invalidTiers: Array<[string, Array<{ upToSupply: bigint; price: bigint }>]> = [
      ["empty", []],
      ["not covering the maximum supply", [{ upToSupply: MAX_SUPPLY - 1n, price: 1n }]],
      [
        "supply not ascending",
        [
          { upToSupply: 10n, price: 1n },
          { upToSupply: 10n, price: 2n },
          { upToSupply: MAX_SUPPLY, price: 3n },
        ],
      ],
      [
        "price falling",
        [
          { upToSupply: 10n, price: 2n },
          { upToSupply: MAX_SUPPLY, price: 1n },
        ],
      ],
      ["too many", Array.from({ length: 33 }, (_, i) => ({ upToSupply: BigInt(i + 1) * 100n, price: 1n }))],
    ];
    for (const [reason, tiers] of invalidTiers) {
      it(`test_RevertWhen_PriceTiersInvalid: ${reason}`, async function () {
        const { license, admin } = await loadFixture(fixture);
        await expect(license.connect(admin).setPriceTiers(tiers)).to.be.revertedWithCustomError(license, "NodeLicense_InvalidPriceTiers");
      });
    }

    it("setTreasury emits old and new; zero and non-admin are refused", async function () {
      const { license, admin, treasury, outsider } = await loadFixture(fixture);
      await expect(license.connect(admin).setTreasury(outsider.address))
        .to.emit(license, "TreasuryUpdated")
        .withArgs(treasury.address, outsider.address);
      await expect(license.connect(admin).setTreasury(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        license,
        "NodeLicense_ZeroAddress",
      );
      await expect(license.connect(outsider).setTreasury(outsider.address)).to.be.revertedWithCustomError(
        license,
        "AccessControlUnauthorizedAccount",
      );
      await expect(license.connect(outsider).setPriceTiers(PRICE_TIERS)).to.be.revertedWithCustomError(
        license,
        "AccessControlUnauthorizedAccount",
      );
    });
  });
});
