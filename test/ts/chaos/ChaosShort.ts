import { expect } from "chai";

import { formatRow, runChaos, TABLE_HEADER } from "../../../src/chaos/run.ts";
import type { ScenarioReport } from "../../../src/chaos/scenarios.ts";
import { startTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { startTestVerificationNetwork } from "../../helpers/network.ts";
import { REDIS } from "../../helpers/redis.ts";
import { requireService } from "../../helpers/services.ts";
import { redisServerInstalled } from "../../../src/devnet/redis-server.ts";
import type { VerificationNetwork } from "../../../src/devnet/verification-network.ts";

/** The hub's ping interval here: the silent-node bar is measured past it, so short keeps the test short. */
const PING_MS = 2_000;

/**
 * `npm run chaos -- --short` as the suite runs it: the verification network of `npm start` (three nodes, the
 * API as two processes over Redis) on a devnet of its own, under a steady load, through the scenarios that
 * fit the suite's time (Redis killed, an API process killed, nodes killed and paused, an L1 reorg), each
 * held to the bars of docs/operations.md.
 */
describe("chaos, short form: faults under load, on a network of its own", function () {
  this.timeout(900_000);
  let test: TestDevnet | undefined;
  let network: VerificationNetwork | undefined;
  let reports: ScenarioReport[] = [];

  before(async function () {
    // Scenario 1 kills the API processes' Redis, which the network runs only where redis-server is installed.
    if (!redisServerInstalled()) requireService(this, REDIS);
    test = await startTestDevnet({ deploy: true });
    const started = await startTestVerificationNetwork(
      test,
      "chaos",
      { POLL_INTERVAL_MS: "500" },
      { ATTESTATION_PING_MS: String(PING_MS) },
    );
    network = started.network;
    reports = await runChaos(
      { devnet: test.devnet, network, stack: started.stack },
      { short: true, pingMs: PING_MS, log: () => undefined },
    );
    console.log(`${TABLE_HEADER}\n${reports.map(formatRow).join("\n")}`);
  });
  after(async function () {
    await network?.stop();
    await test?.stop();
  });

  const report = (prefix: string) => {
    const found = reports.find((entry) => entry.name.startsWith(prefix));
    expect(found, `scenario ${prefix} ran`).to.not.equal(undefined);
    return found!;
  };

  it("answers nothing wrong and loses no job in any scenario, and recovers within 10 s (the reorg excepted)", function () {
    expect(reports.map((entry) => entry.name)).to.have.length(4);
    for (const entry of reports) {
      const wrong = entry.answers.tally().examples.filter((outcome) => outcome.verdict === "wrong");
      expect(wrong, `${entry.name}: ${entry.notes.join("; ")}`).to.deep.equal([]);
      expect(entry.jobs.lost, entry.name).to.equal(0);
      expect(entry.jobs.finalized, `${entry.name}: jobs opened during the fault are finalized`).to.be.above(0);
      if (!entry.name.includes("reorg")) expect(entry.recoverySeconds, entry.name).to.be.at.most(10);
    }
  });

  it("keeps plain answers going, each within 1 s, while Redis is down", function () {
    const { measures } = report("1.");
    expect(measures.plainDuringOutage).to.be.above(5);
    expect(measures.plainRightDuringOutage / measures.plainDuringOutage).to.be.at.least(0.99);
    expect(measures.plainSlowestMs).to.be.below(1_000);
  });

  it("refuses an attested answer within 500 ms once the nodes it needs are silent past the ping interval", function () {
    const { measures } = report("3.");
    expect(measures.attestedWhileSilent).to.be.above(0);
    expect(measures.refusedWhileSilent).to.equal(measures.attestedWhileSilent);
    expect(measures.slowestWhileSilentMs).to.be.below(500);
  });

  it("restarts the crashed node, and answers about Ethereum follow the L1 through a reorg", function () {
    expect(network!.nodeRestarts(0)).to.equal(1);
    const reorg = report("6.");
    expect(reorg.answers.tally((stream) => stream.startsWith("evm")).right).to.be.above(0);
  });
});
