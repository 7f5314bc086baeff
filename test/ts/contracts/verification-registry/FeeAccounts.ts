// A license's fee account: written once before its first fee (when its owner sets it up, or when its node
// starts), so that no recording pays for a fee slot's first write, and kept non-zero by claims.
import { expect } from "chai";
import hre from "hardhat";
import { pino } from "pino";

import { deployProtocolContracts } from "../../../../src/deploy/contracts.ts";
import { delegateLicenses } from "../../../../src/devnet/network-setup.ts";
import { openLicenseAccounts } from "../../../../src/node/license-accounts.ts";
import type { TxOutcome } from "../../../../src/node/tx-sender.ts";
import { attestationOf, domainOf, signAll } from "../../../helpers/attestations.ts";
import { E18, REQUEST_FEE } from "../../../helpers/protocol.ts";
import { ethers, loadFixture } from "./fixture.ts";

/** The bar of finding 6 (issue 46): every recording of a new subject, the network's first included. */
const NEW_SUBJECT_BAR = 110_000n;

/**
 * A bar on the gas of the deployed bytecode: under coverage the instrumented contracts spend more, so it
 * is held only without it (`npm run test:gas` runs this file so, on every `npm test`). The differences
 * this file also checks hold either way: they are storage writes, which instrumentation does not change.
 */
function expectGasAtMost(gasUsed: bigint, bar: bigint, label: string): void {
  if (!hre.globalOptions.coverage) expect(gasUsed, label).to.be.at.most(bar);
}

/**
 * A fresh deployment with the modules' defaults (quorum 2, as the local stack runs), three owners that
 * each buy one license (ids 1, 2, 3) and, with `setUp`, set it up for their node's burner as the local
 * stack does (`delegateLicenses`, src/devnet/network-setup.ts); without it, they only delegate. The burners
 * heart-beat; the consumer has collateral.
 */
async function deployFresh(setUp: boolean) {
  const [admin, treasury, forfeit, alice, bob, carol, burnerA, burnerB, burnerC, consumer, outsider] = await ethers.getSigners();
  const contracts = await deployProtocolContracts(ethers, {
    tokens: { supplyRecipient: treasury.address, admin: admin.address, forfeitRecipient: forfeit.address, adminTransferDelay: 0n },
    protocol: { admin: admin.address, treasury: treasury.address, adminTransferDelay: 0n },
  });
  const { primary, license, nodeRegistry, registry } = contracts;
  const addresses = { NodeRegistry: await nodeRegistry.getAddress(), VerificationRegistry: await registry.getAddress() };
  const nodes = [
    { owner: alice, burner: burnerA, licenseIds: [1n] },
    { owner: bob, burner: burnerB, licenseIds: [2n] },
    { owner: carol, burner: burnerC, licenseIds: [3n] },
  ];
  for (const { owner, burner, licenseIds } of nodes) {
    const price = await license.quote(1n);
    await (await primary.connect(treasury).transfer(owner.address, price)).wait();
    await (await primary.connect(owner).approve(await license.getAddress(), price)).wait();
    await (await license.connect(owner).buy(1n, price)).wait();
    if (setUp) await delegateLicenses(owner, addresses, licenseIds, burner.address);
    else await (await nodeRegistry.connect(owner).delegate(licenseIds, burner.address)).wait();
    await (await nodeRegistry.connect(burner)["heartbeat(uint32)"](100)).wait();
  }
  await (await primary.connect(treasury).transfer(consumer.address, 1_000n * E18)).wait();
  await (await primary.connect(consumer).approve(addresses.VerificationRegistry, 1_000n * E18)).wait();
  await (await registry.connect(consumer).stakeCollateral(consumer.address, 1_000n * E18)).wait();
  const domain = await domainOf(ethers, await contracts.attestationVerifier.getAddress());
  return { ...contracts, nodes, consumer, outsider, domain };
}

const setUpTheStacksWay = () => deployFresh(true);
const delegatedOnly = () => deployFresh(false);
type Fresh = Awaited<ReturnType<typeof deployFresh>>;

let subjects = 0;

/**
 * The consumer records an attestation of a subject never recorded before, signed by the first two nodes
 * (the quorum), sent as a default ethers client sends it (its own estimate, no gas override); returns the
 * receipt's gas used.
 */
async function recordNewSubject(f: Fresh): Promise<bigint> {
  subjects += 1;
  // An owner address with no zero bytes to speak of, as a real one (zero calldata bytes cost 12 gas less each).
  const owner = ethers.zeroPadValue(ethers.dataSlice(ethers.id(`fee accounts subject ${subjects}`), 12), 32);
  const attestation = await attestationOf(ethers, { owner });
  const signatures = await signAll(f.domain, attestation, f.nodes.slice(0, 2));
  const receipt = await (await f.attestationVerifier.connect(f.consumer).recordAttestation(attestation, signatures)).wait();
  return receipt!.gasUsed;
}

/** Each of the first two nodes' owners claims its license's fees. */
async function claimAll(f: Fresh): Promise<void> {
  for (const { owner, licenseIds } of f.nodes.slice(0, 2)) await (await f.registry.connect(owner).claimFees(licenseIds)).wait();
}

describe("VerificationRegistry: license fee accounts", function () {
  describe("recording costs on a network set up as the local stack sets it up", function () {
    it("the network's first recording of a new subject costs at most 110,000 gas", async function () {
      const f = await loadFixture(setUpTheStacksWay);
      for (const licenseId of [1n, 2n, 3n]) expect(await f.registry.isLicenseAccountOpen(licenseId)).to.equal(true);
      const gasUsed = await recordNewSubject(f);
      expectGasAtMost(gasUsed, NEW_SUBJECT_BAR, `first recording: ${gasUsed} gas`);
      expect(await f.registry.claimableFees(1n)).to.equal(REQUEST_FEE / 2n);
    });

    it("so does the first recording after the signing licenses' owners claimed their fees", async function () {
      const f = await loadFixture(setUpTheStacksWay);
      await recordNewSubject(f);
      await claimAll(f);
      expect(await f.registry.claimableFees(1n)).to.equal(0n);
      const gasUsed = await recordNewSubject(f);
      expectGasAtMost(gasUsed, NEW_SUBJECT_BAR, `first recording after the claims: ${gasUsed} gas`);
    });
  });

  describe("a license whose account nobody opened", function () {
    it("pays its fee slot's first write once, with its first fee: after a claim the next recording is under the bar", async function () {
      const f = await loadFixture(delegatedOnly);
      const first = await recordNewSubject(f);
      // The cold first write, ~17k gas per signing license, is what opening the accounts spares the recorder.
      expect(first, `first recording, accounts never opened: ${first} gas`).to.be.above(NEW_SUBJECT_BAR);
      await claimAll(f);
      const afterClaim = await recordNewSubject(f);
      expectGasAtMost(afterClaim, NEW_SUBJECT_BAR, `first recording after the claims: ${afterClaim} gas`);
      // Two signing licenses, each spared a first write (22,100 cold against 5,000): at least 30,000 in all.
      expect(first - afterClaim, `first ${first}, after the claims ${afterClaim}`).to.be.at.least(30_000n);
    });

    it("the first fee opens the account it credits, and only that one", async function () {
      const f = await loadFixture(delegatedOnly);
      expect(await f.registry.isLicenseAccountOpen(1n)).to.equal(false);
      await recordNewSubject(f);
      expect(await Promise.all([1n, 2n, 3n].map((id) => f.registry.isLicenseAccountOpen(id)))).to.deep.equal([true, true, false]);
    });
  });

  describe("a circuit node at start (src/node/license-accounts.ts)", function () {
    /** The node's sender reduced to what the opener uses: the burner sends each transaction at once. */
    function senderOf(burner: Fresh["nodes"][number]["burner"]) {
      const sent: string[] = [];
      return {
        sent,
        async send(kind: string, to: string, data: string): Promise<{ id: number; outcome: Promise<TxOutcome> }> {
          sent.push(kind);
          const tx = await burner.sendTransaction({ to, data });
          return { id: sent.length, outcome: tx.wait().then((receipt) => (receipt?.status === 1 ? "mined" : "reverted")) };
        },
      };
    }
    const logger = pino({ level: "silent" });

    it("opens the accounts of its licenses that are not open, with its burner's gas, and then sends nothing", async function () {
      const f = await loadFixture(delegatedOnly);
      const registry = () => f.registry;
      const registryAddress = await f.registry.getAddress();
      for (const node of f.nodes.slice(0, 2)) {
        const sender = senderOf(node.burner);
        const opening = await openLicenseAccounts(node.licenseIds, { registry, registryAddress, sender, logger });
        expect(opening?.licenseIds).to.deep.equal(node.licenseIds);
        expect(await opening?.outcome).to.equal("mined");
        expect(sender.sent).to.deep.equal(["openLicenseAccounts"]);
        const again = senderOf(node.burner);
        expect(await openLicenseAccounts(node.licenseIds, { registry, registryAddress, sender: again, logger })).to.equal(undefined);
        expect(again.sent).to.deep.equal([]);
      }
      const gasUsed = await recordNewSubject(f);
      expectGasAtMost(gasUsed, NEW_SUBJECT_BAR, `first recording after the nodes started: ${gasUsed} gas`);
    });

    it("goes on when the registry cannot answer (an older deployment): nothing sent, nothing thrown", async function () {
      const f = await loadFixture(delegatedOnly);
      // The node registry has no `isLicenseAccountOpen`: every read of it reverts.
      const elsewhere = f.registry.attach(await f.nodeRegistry.getAddress()) as typeof f.registry;
      const sender = senderOf(f.nodes[0].burner);
      const opening = await openLicenseAccounts([1n], { registry: () => elsewhere, registryAddress: "", sender, logger });
      expect(opening).to.equal(undefined);
      expect(sender.sent).to.deep.equal([]);
    });
  });

  describe("openLicenseAccounts", function () {
    it("opens each account once, for anyone, and changes no amount or count", async function () {
      const f = await loadFixture(delegatedOnly);
      const opening = f.registry.connect(f.outsider).openLicenseAccounts([1n, 2n]);
      await expect(opening)
        .to.emit(f.registry, "LicenseAccountOpened")
        .withArgs(1n, f.outsider.address)
        .and.to.emit(f.registry, "LicenseAccountOpened")
        .withArgs(2n, f.outsider.address);
      expect(await Promise.all([1n, 2n, 3n].map((id) => f.registry.isLicenseAccountOpen(id)))).to.deep.equal([true, true, false]);
      for (const licenseId of [1n, 2n]) {
        expect(await f.registry.claimableFees(licenseId)).to.equal(0n);
        expect(await f.registry.voteStatsOf(licenseId)).to.deep.equal([0n, 0n]);
      }
      // Again, with one account still closed: only that one is written and announced.
      const again = await (await f.registry.connect(f.nodes[2].owner).openLicenseAccounts([1n, 2n, 3n])).wait();
      const opened = again!.logs.map((log) => f.registry.interface.parseLog(log)).filter((log) => log?.name === "LicenseAccountOpened");
      expect(opened.map((log) => log!.args.licenseId)).to.deep.equal([3n]);
      expect(await f.registry.isLicenseAccountOpen(3n)).to.equal(true);
    });

    it("costs a first write once: opening an open account writes nothing", async function () {
      const f = await loadFixture(delegatedOnly);
      const first = (await (await f.registry.connect(f.outsider).openLicenseAccounts([1n])).wait())!;
      const again = (await (await f.registry.connect(f.outsider).openLicenseAccounts([1n])).wait())!;
      expectGasAtMost(first.gasUsed, 55_000n, `opening one account: ${first.gasUsed} gas`);
      expect(again.logs).to.have.length(0);
      // A warm-priced read and no write: far below the 20,000 of a first write.
      expect(first.gasUsed - again.gasUsed, `opening ${first.gasUsed}, again ${again.gasUsed}`).to.be.at.least(20_000n);
      expectGasAtMost(again.gasUsed, 35_000n, `opening again: ${again.gasUsed} gas`);
    });

    it("refuses an id the license contract never minted, and then opens none of the list", async function () {
      const f = await loadFixture(delegatedOnly);
      await expect(f.registry.connect(f.outsider).openLicenseAccounts([1n, 4n]))
        .to.be.revertedWithCustomError(f.registry, "VerificationRegistry_UnknownLicense")
        .withArgs(4n);
      await expect(f.registry.connect(f.outsider).openLicenseAccounts([0n]))
        .to.be.revertedWithCustomError(f.registry, "VerificationRegistry_UnknownLicense")
        .withArgs(0n);
      expect(await f.registry.isLicenseAccountOpen(1n)).to.equal(false);
      // A license minted later can be opened then.
      const [, treasury] = await ethers.getSigners();
      const price = await f.license.quote(1n);
      await (await f.primary.connect(treasury).approve(await f.license.getAddress(), price)).wait();
      await (await f.license.connect(treasury).buy(1n, price)).wait();
      await expect(f.registry.connect(f.outsider).openLicenseAccounts([4n]))
        .to.emit(f.registry, "LicenseAccountOpened")
        .withArgs(4n, f.outsider.address);
    });

    it("an empty list opens nothing", async function () {
      const f = await loadFixture(delegatedOnly);
      const receipt = await (await f.registry.connect(f.outsider).openLicenseAccounts([])).wait();
      expect(receipt!.logs).to.have.length(0);
    });

    it("keeps the fee accounting exact: the marker is no fee, and no claim closes the account", async function () {
      const f = await loadFixture(setUpTheStacksWay);
      await recordNewSubject(f);
      await recordNewSubject(f);
      const alice = f.nodes[0].owner;
      expect(await f.registry.claimableFees(1n)).to.equal(REQUEST_FEE);
      const stakedBefore = await f.staked.balanceOf(alice.address);
      await expect(f.registry.connect(alice).claimFees([1n]))
        .to.emit(f.registry, "FeesClaimed")
        .withArgs(1n, alice.address, REQUEST_FEE);
      expect((await f.staked.balanceOf(alice.address)) - stakedBefore).to.equal(REQUEST_FEE);
      expect(await f.registry.claimableFees(1n)).to.equal(0n);
      expect(await f.registry.isLicenseAccountOpen(1n)).to.equal(true);
      await expect(f.registry.connect(alice).claimFees([1n])).to.be.revertedWithCustomError(
        f.registry,
        "VerificationRegistry_NothingToClaim",
      );
    });

    it("reads a job's vote counts and fee shares in an open account as in any other", async function () {
      const f = await loadFixture(setUpTheStacksWay);
      const holder = ethers.zeroPadValue("0x1111111111111111111111111111111111111111", 32);
      const token = ethers.zeroPadValue("0x2222222222222222222222222222222222222222", 32);
      await (await f.registry.connect(f.consumer).requestEvmBalance(ethers.dataSlice(holder, 12), ethers.dataSlice(token, 12))).wait();
      const vote = (licenseId: bigint) => ({
        jobId: 1n,
        licenseIds: [licenseId],
        owner: holder,
        asset: token,
        balance: 7n,
        queryResultHash: ethers.keccak256(ethers.toBeHex(7n, 32)),
        sourceBlock: 100n,
      });
      for (const [index, node] of f.nodes.slice(0, 2).entries()) {
        await (await f.registry.connect(node.burner).submitResults([vote(BigInt(index + 1))])).wait();
      }
      expect((await f.registry.getResult(1n)).status).to.equal(2n); // finalized
      for (const licenseId of [1n, 2n]) {
        expect(await f.registry.voteStatsOf(licenseId)).to.deep.equal([1n, 0n]);
        expect(await f.registry.claimableFees(licenseId)).to.equal(REQUEST_FEE / 2n);
        expect(await f.registry.isLicenseAccountOpen(licenseId)).to.equal(true);
      }
    });
  });
});
