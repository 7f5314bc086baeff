import path from "node:path";

import { expect } from "chai";

import { freePort } from "../../../src/common/free-port.ts";
import { spawnScript, type ScriptProcess } from "../../../src/devnet/script-process.ts";
import { checkoutCompleted, newPayment, postWebhook } from "../../../src/credits/stripe-simulator.ts";
import { startCreditsFixture, TEST_WEBHOOK_SECRET, type CreditsFixture } from "../../helpers/credits.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
/** Where the kill lands after the webhook is sent, in milliseconds: before, during and after its ledger write. */
const KILL_AFTER_MS = [0, 1, 2, 4, 8, 16, 32];

/**
 * The credits service as an operator runs it (`npm run credits`, its own process) killed with SIGKILL in
 * the middle of a Stripe webhook, then started again on its ledger: Stripe sends the event again until it
 * is answered 200, and the payment is credited once, wherever the kill landed.
 */
describe("credits service: killed in the middle of a Stripe webhook", function () {
  this.timeout(180_000);
  let f: CreditsFixture;
  let service: ScriptProcess | undefined;

  before(async function () {
    f = await startCreditsFixture();
  });
  after(async function () {
    await service?.stop("SIGKILL");
    await f?.stop();
  });

  it("credits each payment once when Stripe sends its event again after the crash", async function () {
    const env = f.serviceEnv({ CREDITS_PORT: String(await freePort()) });
    const url = `http://127.0.0.1:${env.CREDITS_PORT}`;
    const start = async () => {
      service = await spawnScript({ projectRoot, script: "credits.ts", env });
      // Up once it answers its health route (it reads the claim contract first).
      for (;;) {
        if (service.child.exitCode !== null) throw new Error("the credits service exited at start");
        if (
          await fetch(`${url}/credits/healthz`).then(
            (response) => response.ok,
            () => false,
          )
        )
          return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await start();
    const outcomes: string[] = [];
    for (const [index, killAfterMs] of KILL_AFTER_MS.entries()) {
      const account = `0x${(index + 1).toString(16).padStart(40, "0")}`;
      const event = checkoutCompleted({ payment: newPayment(), account, amountMinor: 1_000 + index, currency: "usd" });
      const sent = postWebhook(`${url}/credits/webhooks/stripe`, event, TEST_WEBHOOK_SECRET).then(
        (answer) => `answered ${answer.status}`,
        () => "cut off",
      );
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      await service!.stop("SIGKILL");
      outcomes.push(await sent);
      await start();
      // Stripe's retry: the same event, until it is answered 200.
      const retried = await postWebhook(`${url}/credits/webhooks/stripe`, event, TEST_WEBHOOK_SECRET);
      expect(retried.status).to.equal(200);
      const held = (await (await fetch(`${url}/credits/accounts/${account}`)).json()) as {
        balance: number;
        movements: Array<{ kind: string; amount: number }>;
      };
      expect([held.balance, held.movements.map((movement) => [movement.kind, movement.amount])]).to.deep.equal([
        1_000 + index,
        [["purchase", 1_000 + index]],
      ]);
    }
    // The kills landed on both sides of the answer at least once (else the test proves less than it says).
    expect(outcomes).to.include("cut off");
  });
});
