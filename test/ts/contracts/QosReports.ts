import { expect } from "chai";

import { fixture, loadFixture, ethers, time } from "./verification-registry/fixture.ts";
import { EPOCH_DURATION, LIVENESS_WINDOW } from "../../helpers/protocol.ts";

const report = (epoch: bigint, overrides: Partial<Record<string, number>> = {}) => ({
  epoch,
  apiProbes: 10,
  apiCorrect: 9,
  apiErrors: 1,
  apiLatencyP50Ms: 40,
  apiLatencyP95Ms: 120,
  evmSourceLatencyP50Ms: 3,
  svmSourceLatencyP50Ms: 4,
  evmHeadLagSeconds: 2,
  ...overrides,
});

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
      .withArgs(burnerA.address, 1n, epoch, Object.values(report(epoch)));
    // What a node pays per report (docs/verification.md): the checks are three cold reads and an event.
    const receipt = await (await reports.connect(burnerA).report(1n, report(epoch))).wait();
    console.log(`      (a report: ${receipt!.gasUsed} gas)`);
    expect(receipt!.gasUsed).to.be.below(50_000n);
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
