import { existsSync } from "node:fs";
import path from "node:path";

import { expect } from "chai";
import hre from "hardhat";

import { resumeRecovery } from "../../../src/devnet/rehearsal/deploy-run.ts";
import { formatReport, rehearseLiveDeployment, type RehearsalReport } from "../../../src/devnet/rehearsal/rehearsal.ts";

// The dress rehearsal of the live deployment (`npm run rehearse:testnets`), run once: the operator's
// deploy scripts and governance CLI against a local OP devnet with the live chain ids, in a copy of the
// project. npm test runs it in a mocha process of its own, on the copy its `rehearsal:copy` phase made from
// the plain build (AVN_REHEARSAL_COPY); run alone, it makes its own copy.
describe("devnet: rehearsal of the live deployment", function () {
  this.timeout(20 * 60_000);
  let report: RehearsalReport;
  const chainId = (name: string) => hre.config.networks[name].chainId!;

  before(async function () {
    const preparedCopy = process.env.AVN_REHEARSAL_COPY;
    report = await rehearseLiveDeployment({
      projectCopy: preparedCopy !== undefined && existsSync(preparedCopy) ? preparedCopy : undefined,
      projectRoot: path.resolve(import.meta.dirname, "..", "..", ".."),
      live: {
        l1: { network: "l1Testnet", chainId: chainId("l1Testnet") },
        l2: { network: "l2Testnet", chainId: chainId("l2Testnet") },
        l1BlockSeconds: 12,
      },
    });
    console.log(formatReport(report));
  });

  it("deploys at the live chain ids, with every placeholder of the live parameter files filled and nothing else changed", function () {
    expect(report.chainIds).to.deep.equal({ l1: 11155111, l2: 123420000418 });
    expect(report.deployments.l1.chainId).to.equal(11155111);
    expect(report.deployments.l2.chainId).to.equal(123420000418);
    expect(Object.keys(report.filledParameters).sort()).to.deep.equal(
      ["L1.proposalGuardian", "L1.supplyRecipient", "L2.forfeitRecipient", "L2.rewardsFunder", "L2.treasury"].sort(),
    );
    expect(report.settingMismatches).to.deep.equal([]);
    expect(report.deployments.l1.addresses).to.include.keys("L1#PrimaryToken", "L1#ProtocolGovernor", "L1#ProtocolTimelock");
    expect(report.deployments.l2.addresses).to.include.keys("L2#GovernanceExecutor", "L2#VerificationRegistry", "L2#StakedToken");
  });

  for (const chain of ["l1", "l2"] as const) {
    it(`resumes the ${chain.toUpperCase()} deploy script killed after its first transaction without redeploying`, function () {
      const run = report.deployments[chain];
      expect(run.interrupted, "the first run was killed").to.equal(true);
      expect(run.interruptedAfterTransactions).to.be.greaterThan(0);
      expect(run.resumedExitCode).to.equal(0);
      expect(run.futuresSentTwice).to.deep.equal([]);
      expect(run.firstContractKept).to.equal(true);
      expect(run.gasUsed > 0n).to.equal(true);
    });
  }

  it("passes governance's first proposal with the live settings and executes it on L2", function () {
    expect(report.governance.executedOnL1).to.equal(true);
    expect(report.governance.executedOnL2).to.equal(true);
    const live = Object.fromEntries(report.governance.steps.map((step) => [step.step, step.liveSeconds]));
    expect(live["voting delay"]).to.equal(7200 * 12);
    expect(live["voting period"]).to.equal(50400 * 12);
    expect(live["timelock delay"]).to.equal(172800);
    expect(live["relay to L2"]).to.be.greaterThan(0);
    expect(report.governance.status).to.match(/executed/i);
  });

  it("leaves no role with the deployer and every role as docs/governance.md says", function () {
    expect(report.unexpectedRoles).to.deep.equal([]);
  });
});

// Which of the two half-done journals a kill can leave the rehearsal's resume met is a matter of timing: the
// recovery each one names is checked here on Ignition's own messages.
describe("devnet: the rehearsal's recovery of a deploy script's failed resume", function () {
  it("reads the future and the nonce HHE10410 names (tracked when the chain has that transaction, else wiped)", function () {
    const output = [
      "Error HHE10410 in plugin hardhat-ignition: An error occurred while trying to send a transaction for future L2#StakedToken.",
      "Please use a block explorer to find the hash of the transaction with nonce 7 sent from account 0x90F79bf6EB2c4f870365E785982E1f101E93b906 and use the following command to add it to your deployment:",
      "npx hardhat ignition track-tx <txHash> <deploymentId> --network <networkName>",
    ].join("\n");
    expect(resumeRecovery(output)).to.deep.equal({
      kind: "track-tx",
      futureId: "L2#StakedToken",
      nonce: 7,
      sender: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    });
  });

  it("wipes the future HHE10000 names (started, no transaction recorded)", function () {
    const output =
      "Error HHE10000 in plugin hardhat-ignition: Internal Hardhat Ignition invariant was violated: Unable to find network " +
      "interaction for L1#ProtocolTimelock when trying to get pending onchain interaction";
    expect(resumeRecovery(output)).to.deep.equal({ kind: "wipe", futureId: "L1#ProtocolTimelock" });
  });

  it("names none for any other failure, which the rehearsal then reports as it is", function () {
    expect(
      resumeRecovery("Error HHE10000 in plugin hardhat-ignition: Internal Hardhat Ignition invariant was violated: something else"),
    ).to.equal(undefined);
    expect(resumeRecovery("Error: insufficient funds for gas * price + value")).to.equal(undefined);
  });
});
