import { expect } from "chai";
import { NonceManager } from "ethers";

import { CHALLENGER_ROLE } from "@avn/protocol/qos";

import { Challenger, challengeTargetsSchema, type ChallengeTarget, type SentChallenge } from "../../../src/challenger/challenger.ts";
import { E18 } from "@avn/protocol/units";
import { solanaBytes32 } from "../../../src/devnet/demo-verify.ts";
import { addressToBytes32 } from "../../helpers/protocol.ts";
import { ethers, fixture, loadFixture, networkHelpers } from "../contracts/verification-registry/fixture.ts";

const TOKEN = "0x2222222222222222222222222222222222222222";
const HOLDER = "0x3333333333333333333333333333333333333333";
const MINT = "So11111111111111111111111111111111111111112";
const SOL_OWNER = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const TARGETS: ChallengeTarget[] = [
  { chain: "evm", owner: HOLDER, asset: TOKEN },
  { chain: "svm", owner: SOL_OWNER, asset: MINT },
];

/** A `random` that returns `values` in turn (then 0.5): the test decides every draw. */
const draws =
  (...values: number[]) =>
  () =>
    values.shift() ?? 0.5;

describe("challenger: bursts of job requests at random times (benchmark testing)", function () {
  async function withChallenger() {
    const context = await loadFixture(fixture);
    const { nodeRegistry, registry, admin, outsider } = context;
    await nodeRegistry.connect(admin).grantRole(CHALLENGER_ROLE, outsider.address);
    await registry.connect(outsider).stakeCollateral(outsider.address, 1_000n * E18);
    return { ...context, challengerRegistry: registry.connect(new NonceManager(outsider)) };
  }

  it("opens a burst of the drawn size about the drawn targets, one in four about a fresh owner of the target's asset", async function () {
    const { registry, challengerRegistry, outsider } = await withChallenger();
    // Size: 2 + floor(0.99 × 4) = 5. Then per job: target index draw, fresh-owner draw (0 of 4 is fresh).
    const random = draws(0.99, 0.1, 0.5, 0.9, 0.5, 0.1, 0.0, 0.9, 0.9, 0.1, 0.3);
    const challenger = new Challenger({
      registry: challengerRegistry,
      targets: TARGETS,
      meanIntervalMs: 1_000,
      burstMin: 2,
      burstMax: 5,
      random,
    });
    const sent = await challenger.burst();
    expect(sent.map(({ target }) => target.chain)).to.deep.equal(["evm", "svm", "evm", "svm", "evm"]);
    expect(sent.slice(0, 2).map(({ target }) => target.owner)).to.deep.equal([HOLDER, SOL_OWNER]);
    // The third: a fresh owner (draw 0.0 → 0 of 4), never one of the targets.
    expect(sent[2].target.asset).to.equal(TOKEN);
    expect(sent[2].target.owner)
      .to.match(/^0x[0-9a-fA-F]{40}$/)
      .and.not.equal(HOLDER);
    // Each is a job of the registry, requested by the challenger, about exactly that subject.
    for (const { jobId, target } of sent) {
      const [opened] = await registry.queryFilter(registry.filters.VerificationRequested(jobId));
      expect(opened.args.requester).to.equal(outsider.address);
      expect(Number(opened.args.chain)).to.equal(target.chain === "evm" ? 0 : 1);
      const encoded = target.chain === "evm" ? addressToBytes32(target.owner) : solanaBytes32(target.owner);
      expect(opened.args.owner.toLowerCase()).to.equal(encoded.toLowerCase());
    }
    expect(new Set(sent.map(({ jobId }) => jobId)).size).to.equal(5);
  });

  it("waits an exponentially distributed time with the configured mean, and stops between bursts", async function () {
    const { challengerRegistry } = await withChallenger();
    const challenger = new Challenger({
      registry: challengerRegistry,
      targets: TARGETS,
      meanIntervalMs: 10_000,
      burstMin: 1,
      burstMax: 1,
      random: draws(0.5, 1 - Math.exp(-3)),
    });
    // closeTo of Hardhat's chai matchers takes integers: compare the distance instead.
    expect(Math.abs(challenger.nextWaitMs() - 10_000 * Math.LN2)).to.be.below(1e-6);
    expect(Math.abs(challenger.nextWaitMs() - 30_000)).to.be.below(1e-6);

    // Running: the first burst comes after its wait (1 ms here), and stop() returns once it is mined.
    const bursts: SentChallenge[][] = [];
    let burstSeen!: () => void;
    const firstBurst = new Promise<void>((resolve) => (burstSeen = resolve));
    const running = new Challenger({
      registry: challengerRegistry,
      targets: TARGETS.slice(0, 1),
      meanIntervalMs: 1,
      burstMin: 2,
      burstMax: 2,
      onBurst: (outcome) => {
        if ("sent" in outcome) bursts.push(outcome.sent);
        burstSeen();
      },
    });
    running.start();
    await firstBurst;
    await running.stop();
    expect(bursts[0]).to.have.length(2);
  });

  it("says why a burst failed (no collateral left), sends the next one once it can, and refuses a malformed targets file", async function () {
    const { registry, outsider, nodeRegistry, admin } = await loadFixture(fixture);
    await nodeRegistry.connect(admin).grantRole(CHALLENGER_ROLE, outsider.address);
    // No collateral staked: the request reverts at its estimate, with the registry's reason.
    const challenger = new Challenger({
      registry: registry.connect(new NonceManager(outsider)),
      targets: TARGETS,
      meanIntervalMs: 1,
      burstMin: 1,
      burstMax: 1,
    });
    let failure: unknown;
    try {
      await challenger.burst();
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.match(/InsufficientCollateral|collateral/i);

    // A request that passes its estimate and then fails to be sent (here: no ETH for its gas) never takes its nonce:
    // once the challenger can pay again, its next burst takes that nonce, not the one after, which would wait
    // behind the gap for good.
    await registry.connect(admin).stakeCollateral(outsider.address, 1_000n * E18);
    const balance = await ethers.provider.getBalance(outsider.address);
    await networkHelpers.setBalance(outsider.address, 0n);
    failure = undefined;
    try {
      await challenger.burst();
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.match(/fund/i);
    await networkHelpers.setBalance(outsider.address, balance);
    const [opened] = await challenger.burst();
    expect((await registry.queryFilter(registry.filters.VerificationRequested(opened.jobId)))[0].args.requester).to.equal(outsider.address);

    expect(challengeTargetsSchema.safeParse([]).success).to.equal(false);
    expect(challengeTargetsSchema.safeParse([{ chain: "evm", owner: "0x12", asset: TOKEN }]).success).to.equal(false);
    expect(challengeTargetsSchema.safeParse([{ chain: "svm", owner: HOLDER, asset: MINT }]).success).to.equal(false);
    expect(challengeTargetsSchema.safeParse(TARGETS).success).to.equal(true);
  });
});
