import { expect } from "chai";
import hre from "hardhat";

import { fixture, loadFixture, ethers, time } from "./verification-registry/fixture.ts";
import { EPOCH_DURATION, LIVENESS_WINDOW } from "../../helpers/protocol.ts";

type Peer = { licenseId: bigint; roundsObserved: number; roundsSigned: number; medianSigningMs: number };
const peer = (licenseId: bigint, roundsObserved = 10, roundsSigned = 9, medianSigningMs = 40): Peer => ({
  licenseId,
  roundsObserved,
  roundsSigned,
  medianSigningMs,
});

const report = (epoch: bigint, overrides: Partial<Record<string, number>> = {}, peers: Peer[] = []) => ({
  epoch,
  apiProbes: 10,
  apiCorrect: 9,
  apiErrors: 1,
  apiLatencyP50Ms: 40,
  apiLatencyP95Ms: 120,
  evmSourceLatencyP50Ms: 3,
  svmSourceLatencyP50Ms: 4,
  evmHeadLagSeconds: 2,
  peerRounds: 10,
  ...overrides,
  peers,
});

/** The event's tuple as ethers reports it: the struct's fields in order, the peers as tuples too. */
const asTuple = ({ peers, ...fields }: ReturnType<typeof report>) => [...Object.values(fields), peers.map(Object.values)];

describe("QosReports: the nodes' measurements of the service, published by live operators", function () {
  async function deployed() {
    const context = await loadFixture(fixture);
    const reports = await ethers.deployContract("QosReports", [await context.registry.getAddress()]);
    return { ...context, reports };
  }

  it("publishes a live operator's report of the current epoch as an event, and stores nothing", async function () {
    const { reports, registry, burnerA } = await deployed();
    const epoch = await registry.currentEpoch();
    await expect(reports.connect(burnerA).report(1n, report(epoch)))
      .to.emit(reports, "QosReported")
      .withArgs(burnerA.address, 1n, epoch, asTuple(report(epoch)));
    const withPeers = report(epoch, {}, [peer(2n), peer(3n, 10, 10, 1)]);
    await expect(reports.connect(burnerA).report(1n, withPeers))
      .to.emit(reports, "QosReported")
      .withArgs(burnerA.address, 1n, epoch, asTuple(withPeers));
    // What a node pays per report (docs/verification.md): the checks are three cold reads and an event, and
    // each peer is its calldata, its log data and a loop step.
    const gasWith = async (count: number) => {
      const peers = Array.from({ length: count }, (_, index) => peer(BigInt(index + 2)));
      return (await (await reports.connect(burnerA).report(1n, report(epoch, {}, peers))).wait())!.gasUsed;
    };
    const [none, three, cap] = [await gasWith(0), await gasWith(3), await gasWith(128)];
    const perPeer = (cap - none) / 128n;
    console.log(`      (a report: ${none} gas; with 3 peers ${three}; with 128 peers ${cap}, ${perPeer} per peer)`);
    // Bars on the deployed bytecode: under coverage the instrumented contracts spend more.
    if (!hre.globalOptions.coverage) {
      expect(none).to.be.below(50_000n);
      expect(three).to.be.below(56_000n);
      expect(perPeer).to.be.below(3_000n);
    }
  });

  it("refuses more than MAX_PEER_OBSERVATIONS peers, peers out of order or repeated, and peer counts that do not nest", async function () {
    const { reports, registry, burnerA } = await deployed();
    const epoch = await registry.currentEpoch();
    const max = await reports.MAX_PEER_OBSERVATIONS();
    const many = Array.from({ length: Number(max) + 1 }, (_, index) => peer(BigInt(index + 1)));
    await expect(reports.connect(burnerA).report(1n, report(epoch, {}, many)))
      .to.be.revertedWithCustomError(reports, "QosReports_TooManyPeers")
      .withArgs(max + 1n, max);
    await expect(reports.connect(burnerA).report(1n, report(epoch, {}, [peer(2n), peer(3n), peer(3n)])))
      .to.be.revertedWithCustomError(reports, "QosReports_PeersNotAscending")
      .withArgs(2n);
    await expect(reports.connect(burnerA).report(1n, report(epoch, {}, [peer(3n), peer(2n)])))
      .to.be.revertedWithCustomError(reports, "QosReports_PeersNotAscending")
      .withArgs(1n);
    await expect(reports.connect(burnerA).report(1n, report(epoch, {}, [peer(2n, 5, 6)])))
      .to.be.revertedWithCustomError(reports, "QosReports_InconsistentPeerCounts")
      .withArgs(2n, 5n, 6n);
    await expect(reports.connect(burnerA).report(1n, report(epoch, { peerRounds: 9 }, [peer(2n, 10, 10)])))
      .to.be.revertedWithCustomError(reports, "QosReports_InconsistentPeerCounts")
      .withArgs(2n, 10n, 10n);
    // Exactly the cap, and counts at their bounds: accepted.
    const cap = many.slice(0, Number(max)).map((entry) => ({ ...entry, roundsObserved: 10, roundsSigned: 10 }));
    await expect(reports.connect(burnerA).report(1n, report(epoch, {}, cap))).to.emit(reports, "QosReported");
  });

  it("refuses another license's operator, a license no longer live, another epoch, and counts that do not add up", async function () {
    const { reports, registry, nodeRegistry, burnerA, burnerB, outsider } = await deployed();
    const epoch = await registry.currentEpoch();
    await expect(reports.connect(burnerB).report(1n, report(epoch)))
      .to.be.revertedWithCustomError(reports, "QosReports_NotLiveOperator")
      .withArgs(burnerB.address, 1n);
    await expect(reports.connect(outsider).report(9n, report(epoch))).to.be.revertedWithCustomError(reports, "QosReports_NotLiveOperator");
    await expect(reports.connect(burnerA).report(1n, report(epoch + 1n)))
      .to.be.revertedWithCustomError(reports, "QosReports_WrongEpoch")
      .withArgs(epoch + 1n, epoch);
    await expect(reports.connect(burnerA).report(1n, report(epoch, { apiCorrect: 10, apiErrors: 1 })))
      .to.be.revertedWithCustomError(reports, "QosReports_InconsistentCounts")
      .withArgs(10n, 10n, 1n);
    // Past the liveness window without a heartbeat: not live, no report.
    await time.increase(LIVENESS_WINDOW + 1n);
    await expect(reports.connect(burnerA).report(1n, report(epoch))).to.be.revertedWithCustomError(reports, "QosReports_NotLiveOperator");
    await nodeRegistry.connect(burnerA)["heartbeat()"]();
    await expect(reports.connect(burnerA).report(1n, report(epoch))).to.emit(reports, "QosReported");
    // A new epoch: the old epoch's report is refused.
    await time.increase(EPOCH_DURATION);
    await nodeRegistry.connect(burnerA)["heartbeat()"]();
    await expect(reports.connect(burnerA).report(1n, report(epoch))).to.be.revertedWithCustomError(reports, "QosReports_WrongEpoch");
  });

  it("refuses a zero registry", async function () {
    const factory = await ethers.getContractFactory("QosReports");
    await expect(factory.deploy(ethers.ZeroAddress)).to.be.revertedWithCustomError(factory, "QosReports_ZeroAddress");
  });
});
