import { request as httpRequest } from "node:http";
import path from "node:path";

import { expect } from "chai";

import { freePort } from "../../../src/common/free-port.ts";
import { spawnScript, type ScriptProcess } from "../../../src/devnet/script-process.ts";
import { checkoutCompleted, newPayment, postWebhook, stripeSignature } from "../../../src/credits/stripe-simulator.ts";
import { startCreditsFixture, TEST_WEBHOOK_SECRET, type CreditsFixture } from "../../helpers/credits.ts";
import { nodeLogLine, type NodeLogEntry } from "../../helpers/network.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
const WEBHOOK_PATH = "/credits/webhooks/stripe";

/**
 * Where each kill lands. Every webhook's headers go first and its body is held back until the service logs the
 * request's arrival (Fastify's "incoming request"); then:
 * - "arrived": killed with the body still held back, before the handler ran: always cut off;
 * - a number: the body sent, then killed that many milliseconds later. That delay is the fault's own timing, a
 *   timer on purpose and not a wait for anything: nothing is logged at the moments inside the handler (the
 *   signature checked, the ledger's transaction, the answer written), so the kills are spread over them;
 * - "applied": killed once the service logs the event applied ("stripe event": the ledger's transaction committed),
 *   its answer gone or not;
 * - "answered": killed once it logs the answer sent ("request completed"): always answered.
 */
const KILL_POINTS = ["arrived", 0, 1, 2, 4, 8, 16, 32, "applied", "answered"] as const;

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
    const env = f.serviceEnv({ CREDITS_PORT: String(await freePort()), LOG_LEVEL: "info" });
    const url = `http://127.0.0.1:${env.CREDITS_PORT}`;
    let starts = 0;
    /** Starts the service, resolved once it logs that it listens (it reads the claim contract first); returns its log file. */
    const start = async () => {
      // A log file per run: the one before may still be flushing its last lines.
      const logFile = path.join(f.dir, `credits-service-${starts++}.log`);
      const started = await spawnScript({ projectRoot, script: "credits.ts", env, logFile });
      service = started;
      const up = await Promise.race([
        nodeLogLine(logFile, 0, (entry) => entry.msg === "credits service listening").then(() => true),
        started.exited.then(() => false),
      ]);
      if (!up) throw new Error(`the credits service exited at start (see ${logFile})`);
      return logFile;
    };
    let logFile = await start();
    const outcomes = new Map<(typeof KILL_POINTS)[number], string>();
    for (const [index, killPoint] of KILL_POINTS.entries()) {
      const account = `0x${(index + 1).toString(16).padStart(40, "0")}`;
      const event = checkoutCompleted({ payment: newPayment(), account, amountMinor: 1_000 + index, currency: "usd" });
      const logged = (accept: (entry: NodeLogEntry) => boolean) => nodeLogLine(logFile, 0, accept);
      const webhook = heldBackWebhook(`${url}${WEBHOOK_PATH}`, event);
      // This request's line: the service logged the retry of the last event before it (on another connection).
      const port = await webhook.localPort;
      const { line: arrival } = await logged((entry) => {
        const request = entry.req as { url?: string; remotePort?: number } | undefined;
        return entry.msg === "incoming request" && request?.url === WEBHOOK_PATH && request.remotePort === port;
      });
      if (killPoint !== "arrived") {
        webhook.sendBody();
        if (typeof killPoint === "number")
          await new Promise((resolve) => setTimeout(resolve, killPoint)); // the fault's timing
        else if (killPoint === "applied") await logged((entry) => entry.msg === "stripe event" && entry.event === event.id);
        else await logged((entry) => entry.msg === "request completed" && entry.reqId === arrival.reqId);
      }
      await service!.stop("SIGKILL");
      outcomes.set(killPoint, await webhook.outcome);
      logFile = await start();
      // Stripe's retry: the same event, until it is answered 200.
      const retried = await postWebhook(`${url}${WEBHOOK_PATH}`, event, TEST_WEBHOOK_SECRET);
      expect(retried.status).to.equal(200);
      const held = (await (await fetch(`${url}/credits/accounts/${account}`)).json()) as {
        balance: number;
        movements: Array<{ kind: string; amount: number }>;
      };
      expect([held.balance, held.movements.map((movement) => [movement.kind, movement.amount])], `killed at ${killPoint}`).to.deep.equal([
        1_000 + index,
        [["purchase", 1_000 + index]],
      ]);
    }
    // The kills landed on both sides of the answer (else the test proves less than it says).
    expect(outcomes.get("arrived")).to.equal("cut off");
    expect(outcomes.get("answered")).to.equal("answered 200");
  });
});

/**
 * A Stripe webhook (`event`, signed with the tests' secret) whose headers are sent at once and whose body waits for
 * `sendBody`; `localPort` is its connection's (the service logs it as `remotePort`); `outcome` says how it ended:
 * `answered <status>`, or `cut off` before a whole answer came.
 */
function heldBackWebhook(url: string, event: { id: string }): { localPort: Promise<number>; outcome: Promise<string>; sendBody(): void } {
  const payload = JSON.stringify(event);
  const request = httpRequest(url, {
    method: "POST",
    agent: false,
    headers: {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      "stripe-signature": stripeSignature(payload, TEST_WEBHOOK_SECRET),
    },
  });
  const outcome = new Promise<string>((resolve) => {
    request.on("error", () => resolve("cut off"));
    request.on("response", (response) => {
      response.on("error", () => undefined); // an answer cut short: its close says so
      response.on("close", () => resolve(response.complete ? `answered ${response.statusCode}` : "cut off"));
      response.resume();
    });
  });
  const localPort = new Promise<number>((resolve, reject) => {
    request.once("socket", (socket) => socket.once("connect", () => resolve(socket.localPort!)));
    request.once("error", reject);
  });
  localPort.catch(() => undefined); // a connection refused is the outcome's to say
  request.flushHeaders();
  return { localPort, outcome, sendBody: () => void request.end(payload) };
}
