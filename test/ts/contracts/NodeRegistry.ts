import { expect } from "chai";
import { network } from "hardhat";

import { deployProtocol, LIVENESS_WINDOW, QUORUM } from "../../helpers/protocol.ts";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;
const fixture = () => deployProtocol(ethers);

describe("NodeRegistry", function () {
  describe("deployment", function () {
    it("stores the license collection, liveness window and quorum", async function () {
      const { nodeRegistry, license } = await loadFixture(fixture);
      expect(await nodeRegistry.LICENSE()).to.equal(await license.getAddress());
      expect(await nodeRegistry.livenessWindow()).to.equal(LIVENESS_WINDOW);
      expect(await nodeRegistry.quorum()).to.equal(QUORUM);
    });

    it("refuses invalid constructor arguments", async function () {
      const { license, admin } = await loadFixture(fixture);
      const factory = await ethers.getContractFactory("NodeRegistry");
      await expect(factory.deploy(ethers.ZeroAddress, 60n, 2n, admin.address, 0n)).to.be.revertedWithCustomError(
        factory,
        "NodeRegistry_ZeroAddress",
      );
      await expect(factory.deploy(await license.getAddress(), 0n, 2n, admin.address, 0n))
        .to.be.revertedWithCustomError(factory, "NodeRegistry_InvalidLivenessWindow")
        .withArgs(0n);
      for (const quorum of [0n, 9n]) {
        await expect(factory.deploy(await license.getAddress(), 60n, quorum, admin.address, 0n))
          .to.be.revertedWithCustomError(factory, "NodeRegistry_InvalidQuorum")
          .withArgs(quorum);
      }
    });
  });

  describe("delegate", function () {
    it("delegates several licenses of the owner to an operator", async function () {
      const { nodeRegistry, license, alice, outsider } = await loadFixture(fixture);
      await license.connect(alice).buy(2n, ethers.MaxUint256); // ids 4, 5
      await expect(nodeRegistry.connect(alice).delegate([4n, 5n], outsider.address))
        .to.emit(nodeRegistry, "Delegated")
        .withArgs(4n, alice.address, outsider.address)
        .and.to.emit(nodeRegistry, "Delegated")
        .withArgs(5n, alice.address, outsider.address);
      expect(await nodeRegistry.operatorOf(4n)).to.equal(outsider.address);
      expect(await nodeRegistry.operatorOf(5n)).to.equal(outsider.address);
    });

    it("re-delegating replaces the operator", async function () {
      const { nodeRegistry, alice, burnerA, outsider } = await loadFixture(fixture);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(burnerA.address);
      await nodeRegistry.connect(alice).delegate([1n], outsider.address);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(outsider.address);
    });

    it("refuses a caller who does not own every license", async function () {
      const { nodeRegistry, alice, outsider } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(alice).delegate([1n, 2n], outsider.address))
        .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_NotLicenseOwner")
        .withArgs(2n, alice.address);
      expect(await nodeRegistry.operatorOf(1n)).to.not.equal(outsider.address);
    });

    it("refuses a delegation that no transfer would end (the license contract names another registry)", async function () {
      const { license, admin, alice, outsider } = await loadFixture(fixture);
      const other = await ethers.deployContract("NodeRegistry", [await license.getAddress(), 60n, 2n, admin.address, 0n]);
      await expect(other.connect(alice).delegate([1n], outsider.address)).to.be.revertedWithCustomError(
        other,
        "NodeRegistry_NotLicenseRegistry",
      );
    });

    it("refuses a zero operator, no licenses, or an unminted license", async function () {
      const { nodeRegistry, license, alice, outsider } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(alice).delegate([1n], ethers.ZeroAddress)).to.be.revertedWithCustomError(
        nodeRegistry,
        "NodeRegistry_ZeroAddress",
      );
      await expect(nodeRegistry.connect(alice).delegate([], outsider.address)).to.be.revertedWithCustomError(
        nodeRegistry,
        "NodeRegistry_NoLicenses",
      );
      await expect(nodeRegistry.connect(alice).delegate([999n], outsider.address)).to.be.revertedWithCustomError(
        license,
        "ERC721NonexistentToken",
      );
    });
  });

  describe("a delegation never survives a transfer", function () {
    it("ends once the license changes hands, and stays ended if it comes back", async function () {
      const { nodeRegistry, license, alice, bob, burnerA } = await loadFixture(fixture);
      expect(await nodeRegistry.isLive(1n)).to.equal(true);
      await license.connect(alice).transferFrom(alice.address, bob.address, 1n);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(ethers.ZeroAddress);
      expect(await nodeRegistry.isLive(1n)).to.equal(false);

      await license.connect(bob).transferFrom(bob.address, alice.address, 1n);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(ethers.ZeroAddress);

      // The owner delegates again: valid from then on.
      await nodeRegistry.connect(alice).delegate([1n], burnerA.address);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(burnerA.address);
    });
  });

  describe("undelegate", function () {
    it("removes the delegation and emits the old operator", async function () {
      const { nodeRegistry, alice, burnerA } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(alice).undelegate([1n]))
        .to.emit(nodeRegistry, "Undelegated")
        .withArgs(1n, alice.address, burnerA.address);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(ethers.ZeroAddress);
    });

    it("leaves nothing for a new owner to clear: the transfer ended the delegation", async function () {
      const { nodeRegistry, license, alice, bob } = await loadFixture(fixture);
      await license.connect(alice).transferFrom(alice.address, bob.address, 1n);
      await expect(nodeRegistry.connect(bob).undelegate([1n]))
        .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_NotDelegated")
        .withArgs(1n);
    });

    it("refuses a change of hands reported by anyone but the license contract", async function () {
      const { nodeRegistry, alice, burnerA } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(alice).voidDelegation(1n))
        .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_NotLicense")
        .withArgs(alice.address);
      expect(await nodeRegistry.operatorOf(1n)).to.equal(burnerA.address);
    });

    it("refuses a caller who is not the owner, a license not delegated, or no licenses", async function () {
      const { nodeRegistry, license, alice, bob } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(bob).undelegate([1n]))
        .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_NotLicenseOwner")
        .withArgs(1n, bob.address);
      await license.connect(alice).buy(1n, ethers.MaxUint256);
      await expect(nodeRegistry.connect(alice).undelegate([4n]))
        .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_NotDelegated")
        .withArgs(4n);
      await expect(nodeRegistry.connect(alice).undelegate([])).to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_NoLicenses");
    });
  });

  describe("delegatedLicenses (paged)", function () {
    it("lists an operator's licenses page by page and skips void ones", async function () {
      const { nodeRegistry, license, alice, bob, outsider } = await loadFixture(fixture);
      await license.connect(alice).buy(5n, ethers.MaxUint256); // ids 4..8
      await nodeRegistry.connect(alice).delegate([4n, 6n, 7n, 8n], outsider.address);
      await license.connect(alice).transferFrom(alice.address, bob.address, 7n);

      expect(await nodeRegistry.delegatedLicenses(outsider.address, 1n, 5n)).to.deep.equal([[4n], 6n]);
      expect(await nodeRegistry.delegatedLicenses(outsider.address, 6n, 5n)).to.deep.equal([[6n, 8n], 0n]);
      expect(await nodeRegistry.delegatedLicenses(outsider.address, 0n, 100n)).to.deep.equal([[4n, 6n, 8n], 0n]);
      expect(await nodeRegistry.delegatedLicenses(outsider.address, 9n, 100n)).to.deep.equal([[], 0n]);
      await expect(nodeRegistry.delegatedLicenses(outsider.address, 1n, 0n)).to.be.revertedWithCustomError(
        nodeRegistry,
        "NodeRegistry_ZeroMaxScan",
      );
    });
  });

  describe("heartbeat and liveness", function () {
    it("records the time and capacity; a license is live within the window only", async function () {
      const { nodeRegistry, burnerA } = await loadFixture(fixture);
      const tx = nodeRegistry.connect(burnerA)["heartbeat(uint32)"](42);
      await expect(tx).to.emit(nodeRegistry, "HeartbeatRecorded");
      const beatAt = BigInt(await time.latest());
      expect(await nodeRegistry.heartbeatOf(burnerA.address)).to.deep.equal([beatAt, 42n]);

      await time.increaseTo(beatAt + LIVENESS_WINDOW);
      expect(await nodeRegistry.isLive(1n)).to.equal(true);
      await time.increaseTo(beatAt + LIVENESS_WINDOW + 1n);
      expect(await nodeRegistry.isLive(1n)).to.equal(false);

      await expect(nodeRegistry.connect(burnerA)["heartbeat()"]())
        .to.emit(nodeRegistry, "HeartbeatRecorded")
        .withArgs(burnerA.address, beatAt + LIVENESS_WINDOW + 2n, 0n);
      expect(await nodeRegistry.isLive(1n)).to.equal(true);
    });

    it("an undelegated license is never live", async function () {
      const { nodeRegistry, license, alice } = await loadFixture(fixture);
      await license.connect(alice).buy(1n, ethers.MaxUint256);
      expect(await nodeRegistry.isLive(4n)).to.equal(false);
    });

    it("setQuorum emits old and new; bounds and admin enforced", async function () {
      const { nodeRegistry, admin, outsider } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(admin).setQuorum(3n)).to.emit(nodeRegistry, "QuorumUpdated").withArgs(QUORUM, 3n);
      expect(await nodeRegistry.quorum()).to.equal(3n);
      const max = await nodeRegistry.MAX_QUORUM();
      for (const quorum of [0n, max + 1n]) {
        await expect(nodeRegistry.connect(admin).setQuorum(quorum))
          .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_InvalidQuorum")
          .withArgs(quorum);
      }
      await expect(nodeRegistry.connect(outsider).setQuorum(1n)).to.be.revertedWithCustomError(
        nodeRegistry,
        "AccessControlUnauthorizedAccount",
      );
    });

    it("setLivenessWindow emits old and new; bounds and admin enforced", async function () {
      const { nodeRegistry, admin, outsider } = await loadFixture(fixture);
      await expect(nodeRegistry.connect(admin).setLivenessWindow(3600n))
        .to.emit(nodeRegistry, "LivenessWindowUpdated")
        .withArgs(LIVENESS_WINDOW, 3600n);
      const max = await nodeRegistry.MAX_LIVENESS_WINDOW();
      await expect(nodeRegistry.connect(admin).setLivenessWindow(max + 1n))
        .to.be.revertedWithCustomError(nodeRegistry, "NodeRegistry_InvalidLivenessWindow")
        .withArgs(max + 1n);
      await expect(nodeRegistry.connect(outsider).setLivenessWindow(60n)).to.be.revertedWithCustomError(
        nodeRegistry,
        "AccessControlUnauthorizedAccount",
      );
    });
  });

  describe("recorder functions", function () {
    async function withRecorder() {
      const context = await loadFixture(fixture);
      await context.nodeRegistry.connect(context.admin).grantRole(await context.nodeRegistry.RECORDER_ROLE(), context.outsider.address);
      return context;
    }

    it("recordSubmissions counts one submission per live license of the operator", async function () {
      const { nodeRegistry, outsider, burnerA } = await withRecorder();
      await nodeRegistry.connect(outsider).recordSubmissions(burnerA.address, [1n]);
      await nodeRegistry.connect(outsider).recordSubmissions(burnerA.address, [1n]);
      expect(await nodeRegistry.submissionsOf(1n)).to.equal(2n);
    });

    it("recordSubmissions returns false and counts nothing unless every license is live under the operator", async function () {
      const { nodeRegistry, outsider, burnerA, burnerB } = await withRecorder();
      const recorder = nodeRegistry.connect(outsider);
      // burnerA runs license 1 but not license 2: nothing is counted, not even for license 1.
      expect(await recorder.recordSubmissions.staticCall(burnerA.address, [1n, 2n])).to.equal(false);
      await recorder.recordSubmissions(burnerA.address, [1n, 2n]);
      expect(await recorder.recordSubmissions.staticCall(ethers.ZeroAddress, [999n])).to.equal(false);
      expect(await recorder.recordSubmissions.staticCall(burnerB.address, [2n])).to.equal(true);
      await time.increase(LIVENESS_WINDOW + 1n);
      expect(await recorder.recordSubmissions.staticCall(burnerB.address, [2n])).to.equal(false);
      expect(await nodeRegistry.submissionsOf(1n)).to.equal(0n);
      expect(await nodeRegistry.submissionsOf(2n)).to.equal(0n);
    });

    it("refuses a caller without the recorder role", async function () {
      const { nodeRegistry, burnerA } = await loadFixture(fixture);
      const role = await nodeRegistry.RECORDER_ROLE();
      await expect(nodeRegistry.connect(burnerA).recordSubmissions(burnerA.address, [1n]))
        .to.be.revertedWithCustomError(nodeRegistry, "AccessControlUnauthorizedAccount")
        .withArgs(burnerA.address, role);
    });
  });

  describe("checkDelegations (an attestation's licenses in one call)", function () {
    const entry = (licenseId: bigint, operator: string) => (licenseId << 160n) | BigInt(operator);

    it("is true when every license is delegated to its operator and each operator beat recently, with the quorum", async function () {
      const { nodeRegistry, burnerA, burnerB } = await loadFixture(fixture);
      expect(await nodeRegistry.checkDelegations([entry(1n, burnerA.address), entry(2n, burnerB.address)])).to.deep.equal([true, QUORUM]);
      expect(await nodeRegistry.checkDelegations([])).to.deep.equal([true, QUORUM]);
    });

    it("is false for a license delegated elsewhere or to no one, the zero operator, or a lapsed heartbeat", async function () {
      const { nodeRegistry, license, alice, burnerA, burnerB } = await loadFixture(fixture);
      expect((await nodeRegistry.checkDelegations([entry(2n, burnerA.address)]))[0]).to.equal(false);
      await license.connect(alice).buy(1n, ethers.MaxUint256); // license 4, never delegated
      expect((await nodeRegistry.checkDelegations([entry(4n, ethers.ZeroAddress)]))[0]).to.equal(false);
      // The second license of an operator already found live is still checked for its delegation.
      expect((await nodeRegistry.checkDelegations([entry(1n, burnerA.address), entry(4n, burnerA.address)]))[0]).to.equal(false);
      await time.increase(LIVENESS_WINDOW);
      await nodeRegistry.connect(burnerB)["heartbeat()"]();
      expect((await nodeRegistry.checkDelegations([entry(2n, burnerB.address)]))[0]).to.equal(true);
      expect((await nodeRegistry.checkDelegations([entry(2n, burnerB.address), entry(1n, burnerA.address)]))[0]).to.equal(false);
    });
  });
});
