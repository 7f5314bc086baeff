import { expect } from "chai";
import { Wallet } from "ethers";
import { pino } from "pino";

import { E18 } from "@avn/protocol/units";

import { devAccount } from "../../../src/devnet/accounts.ts";
import { wakeOnNewJobs } from "../../../src/node/wake-up.ts";
import { startAttestationL2, until, type AttestationL2 } from "../attestation/fixture.ts";

describe("node wake-up: a new job wakes the job loop, pushed over the L2's WebSocket", function () {
  this.timeout(120_000);
  let l2: AttestationL2;

  before(async function () {
    l2 = await startAttestationL2();
  });
  after(async function () {
    await l2?.stop();
  });

  it("wakes once subscribed and on each VerificationRequested of the registry, and no more once stopped", async function () {
    const { registry, primary } = l2.contracts;
    const [, treasury] = await l2.ethers.getSigners();
    // An account the fixture gives no role (anvil's 2–9 are the nodes' owners and burners), funded here.
    const consumer = new Wallet(devAccount(10).privateKey, l2.ethers.provider);
    await (await treasury.sendTransaction({ to: consumer.address, value: E18 })).wait();
    await (await primary.connect(treasury).transfer(consumer.address, 100n * E18)).wait();
    await (await primary.connect(consumer).approve(await registry.getAddress(), 100n * E18)).wait();
    await (await registry.connect(consumer).stakeCollateral(consumer.address, 100n * E18)).wait();

    let wakes = 0;
    const stop = wakeOnNewJobs(l2.anvil.wsUrl, await registry.getAddress(), () => (wakes += 1), pino({ level: "silent" }));
    try {
      // Subscribed: one wake, for a job that may have come while subscribing.
      await until("subscribed", () => wakes === 1);
      const token = await primary.getAddress();
      await (await registry.connect(consumer).requestEvmBalance(consumer.address, token)).wait();
      await until("the first job's wake", () => wakes === 2);
      // Another event of the registry (collateral) wakes nothing; the next job does.
      await (await primary.connect(treasury).transfer(consumer.address, E18)).wait();
      await (await primary.connect(consumer).approve(await registry.getAddress(), E18)).wait();
      await (await registry.connect(consumer).stakeCollateral(consumer.address, E18)).wait();
      await (await registry.connect(consumer).requestEvmBalance(treasury.address, token)).wait();
      await until("the second job's wake", () => wakes === 3);
    } finally {
      await stop();
    }
    // Stopped: the next job wakes a second listener, subscribed to the same logs, and not the stopped one.
    const before = wakes;
    let witness = 0;
    const stopWitness = wakeOnNewJobs(l2.anvil.wsUrl, await registry.getAddress(), () => (witness += 1), pino({ level: "silent" }));
    try {
      await until("the witness subscribed", () => witness === 1);
      await (await registry.connect(consumer).requestEvmBalance(consumer.address, await primary.getAddress())).wait();
      await until("the witness woken", () => witness === 2);
      expect(wakes).to.equal(before);
    } finally {
      await stopWitness();
    }
  });
});
