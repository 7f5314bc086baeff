import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { Contract, getAddress, hexlify, NonceManager, randomBytes, Wallet, type JsonRpcProvider } from "ethers";

import { ApiKeys } from "../../../../src/api/keys/api-keys.ts";
import { CLAIM_LEASE_MS, DeliveryQueue, type ClaimedDelivery } from "../../../../src/api/webhooks/delivery-queue.ts";
import { WebhookService } from "../../../../src/api/webhooks/webhook-service.ts";
import { devAccount } from "../../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../../src/devnet/op-devnet.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../../src/devnet/source-chains.ts";
import { parseExactJson } from "../../../../src/devnet/webhook-receiver.ts";
import { spawnApiProcess } from "../../../helpers/api-process.ts";
import { POSTGRES, startPostgres, type TestPostgres } from "../../../helpers/postgres.ts";
import { requireService } from "../../../helpers/services.ts";
import { testWebhookService } from "../../../helpers/webhooks.ts";

/** The bar from a crash mid-attempt to the delivery sent again. */
const REDELIVERY_BAR_MS = 10_000;

interface ReceivedRequest {
  deliveryId: string;
  raw: string;
  body: Record<string, unknown>;
  receivedAt: number;
}

/**
 * A receiver that records every request as it arrives (before answering it), then answers 200 once
 * `answer(request)` resolves: at once unless a test holds or slows it (500 if it fails, kept in `errors`).
 */
class SlowReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly errors: unknown[] = [];
  answer: (request: ReceivedRequest) => Promise<void> = async () => undefined;
  #waiters: Array<{ until: () => boolean; resolve: () => void }> = [];
  readonly #server: Server = createServer((request, response) => {
    void this.#read(request).then(async (received) => {
      this.requests.push(received);
      this.#check();
      const status = await this.answer(received).then(
        () => 200,
        (error: unknown) => {
          this.errors.push(error);
          return 500;
        },
      );
      // A sender killed while its request was held has closed the connection: nobody to answer.
      if (!response.destroyed) response.writeHead(status).end();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /**
   * Resolves once `until` holds: checked now and at every request's arrival. Rejects after `timeoutMs`
   * naming `what` did not come, with the requests so far and `context()` (what the test knows of its senders),
   * so a stuck test says where it stopped instead of reaching mocha's timeout.
   */
  waitFor(what: string, until: () => boolean, context: () => string = () => "", timeoutMs = 60_000): Promise<void> {
    if (until()) return Promise.resolve();
    const signal = AbortSignal.timeout(timeoutMs);
    return new Promise((resolve, reject) => {
      const waiter = { until, resolve };
      this.#waiters.push(waiter);
      signal.addEventListener("abort", () => {
        this.#waiters = this.#waiters.filter((other) => other !== waiter);
        const seen = this.requests.map((request) => `${request.deliveryId} ${request.raw}`).join("\n");
        reject(new Error(`no ${what} within ${timeoutMs} ms; ${this.requests.length} requests:\n${seen}\n${context()}`));
      });
    });
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #read(request: IncomingMessage): Promise<ReceivedRequest> {
    let raw = "";
    request.setEncoding("utf8");
    for await (const chunk of request) raw += chunk as string;
    return { deliveryId: String(request.headers["avn-delivery-id"]), raw, body: parseExactJson(raw), receivedAt: Date.now() };
  }

  #check(): void {
    this.#waiters = this.#waiters.filter((waiter) => {
      if (!waiter.until()) return true;
      waiter.resolve();
      return false;
    });
  }
}

/**
 * A delivery's claim is a short lease that its attempt renews while it runs: a process that dies mid-attempt
 * leaves the delivery to another process after one lease (not after the longest attempt), and an attempt that
 * outlasts the lease (a slow receiver) keeps it, so it is not sent twice.
 */
describe("Webhooks: a delivery's lease, renewed while its attempt runs", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let provider: JsonRpcProvider;
  let token: Contract;
  let postgres: TestPostgres | undefined;
  let folder: string;

  before(async function () {
    sources = await startSourceFixtures();
    provider = devnetProvider(sources.anvil.rpcUrl, 1);
    token = new Contract(
      sources.evm.erc20,
      ["function transfer(address to, uint256 amount) returns (bool)"],
      new NonceManager(new Wallet(devAccount(7).privateKey, provider)),
    );
    folder = await mkdtemp(path.join(tmpdir(), "avn-webhook-leases-"));
  });
  after(async function () {
    provider?.destroy();
    await sources?.stop();
    await postgres?.stop();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  const postgresDatabase = async (context: Mocha.Context) => {
    postgres ??= await startPostgres();
    if (postgres === undefined) requireService(context, POSTGRES);
    return postgres.createDatabase();
  };
  const transfer = async (owner: string, amount: bigint) => {
    await ((await token.getFunction("transfer")(owner, amount)) as { wait(): Promise<unknown> }).wait();
  };
  const serviceOn = (
    keys: ApiKeys,
    failures: unknown[],
    claimLeaseMs?: number,
    onLeaseRenewed?: (delivery: ClaimedDelivery, nowMs: number) => void,
  ) =>
    testWebhookService(keys.db, sources, {
      leaseMs: 600,
      claimLeaseMs,
      onLeaseRenewed,
      onError: (error) => failures.push(error),
    });
  /** Subscribes a new holder of the ERC-20 to `url`, through `service`'s store; its id and owner. */
  const subscribe = async (service: WebhookService, url: string) => {
    const owner = getAddress(hexlify(randomBytes(20))).toLowerCase();
    const asset = sources.evm.erc20.toLowerCase();
    const baseline = await service.routes().readEvm(asset, owner, undefined);
    const [subscription] = await service.subscriptions.create(
      "key",
      [
        {
          chain: "ethereum",
          owner,
          asset,
          tokenId: "",
          url,
          attest: false,
          baselineBalance: baseline.balance,
          baselineBlock: baseline.block,
        },
      ],
      10,
    );
    return { id: subscription.id, owner };
  };

  it("sends a delivery cut off by a killed process again, with its id, once the dead claim's lease has run out", async function () {
    const where = await postgresDatabase(this);
    const receiver = new SlowReceiver();
    const url = await receiver.listen();
    // The first request is never answered: its sender dies holding it.
    receiver.answer = (request) => (request === receiver.requests[0] ? new Promise(() => undefined) : Promise.resolve());
    // `npm run api` as deployed (CLAIM_LEASE_MS), the only process sending at first; it migrates the database.
    const sender = await spawnApiProcess(sources, {
      API_KEYS_DB: where,
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_POLL_MS: "50",
      LOG_LEVEL: "warn",
    });
    const keys = await ApiKeys.open(where, { migrate: false });
    const failures: unknown[] = [];
    const survivor = serviceOn(keys, failures);
    try {
      const { id, owner } = await subscribe(survivor, url);
      await transfer(owner, 5n);
      const state = () =>
        `the sender's last lines:\n${sender.logs.slice(-10).join("\n")}\nthe survivor's failures: ${failures.map(String).join("; ")}`;
      await receiver.waitFor("POST from the API process", () => receiver.requests.length === 1, state);
      await sender.kill();
      const killedAt = Date.now();
      const row = await keys.db
        .selectFrom("webhook_events")
        .select(["lease_owner", "lease_until_ms"])
        .where("subscription_id", "=", id)
        .executeTakeFirstOrThrow();
      const leaseUntilMs = Number(row.lease_until_ms);
      // Its last renewal (or its claim) was made before the kill: the dead process holds it one lease at most.
      expect(row.lease_owner, "claimed by the killed process").to.be.a("string");
      expect(leaseUntilMs - killedAt).to.be.at.most(CLAIM_LEASE_MS);

      survivor.start();
      await receiver.waitFor("delivery sent again by the survivor", () => receiver.requests.length === 2, state);
      const [cut, again] = receiver.requests;
      expect(cut.body).to.deep.include({ subscriptionId: id, balance: 5n });
      expect(again.deliveryId).to.equal(cut.deliveryId);
      expect(again.raw).to.equal(cut.raw);
      expect(again.receivedAt, "not taken before the dead claim's lease ran out").to.be.above(leaseUntilMs);
      expect(again.receivedAt - killedAt, `sent again ${again.receivedAt - killedAt} ms after the kill`).to.be.at.most(REDELIVERY_BAR_MS);
      // Closing waits for the attempts in flight to be recorded: on record is the survivor's one, delivered.
      await survivor.close();
      const attempts = await survivor.queue.attempts(id);
      expect(attempts.map((attempt) => [attempt.deliveryId, attempt.ok])).to.deep.equal([[cut.deliveryId, true]]);
      expect(failures).to.deep.equal([]);
    } finally {
      await sender.kill();
      await survivor.close();
      await keys.close();
      await receiver.close();
    }
  });

  const databases: Array<[string, (context: Mocha.Context) => Promise<string>]> = [
    ["one SQLite file", async () => path.join(folder, "slow.sqlite")],
    ["PostgreSQL", postgresDatabase],
  ];
  for (const [name, location] of databases) {
    it(`sends a delivery once while its attempt outlasts the lease twice (a slow receiver), on ${name}`, async function () {
      const where = await location(this);
      // Short, so that the test is quick: renewed every 375 ms. The POST's own timeout (5 s) is above the hold.
      const leaseMs = 1_500;
      const receiver = new SlowReceiver();
      const url = await receiver.listen();
      const failures: unknown[] = [];
      // The receiver holds the first POST until its attempt has renewed its lease two leases after the POST came:
      // the claim alone would have run out by then.
      let outlasted!: () => void;
      const renewedPastTwoLeases = new Promise<void>((resolve) => (outlasted = resolve));
      const onLeaseRenewed = (_delivery: ClaimedDelivery, nowMs: number) => {
        const first = receiver.requests[0];
        if (first !== undefined && nowMs >= first.receivedAt + 2 * leaseMs) outlasted();
      };
      const processes: Array<{ keys: ApiKeys; service: WebhookService }> = [];
      for (const first of [true, false]) {
        const keys = await ApiKeys.open(where, { migrate: first });
        processes.push({ keys, service: serviceOn(keys, failures, leaseMs, onLeaseRenewed) });
      }
      // A third owner that tries to take the change when the receiver answers, two leases after the POST
      // arrived: only the renewals keep it from taking it.
      const competitor = new DeliveryQueue(processes[0].keys.db, undefined, leaseMs);
      const taken: ClaimedDelivery[] = [];
      receiver.answer = async (request) => {
        if (request !== receiver.requests[0]) return;
        await renewedPastTwoLeases;
        taken.push(...(await competitor.claim("competitor", 10)));
      };
      try {
        const { id, owner } = await subscribe(processes[0].service, url);
        for (const { service } of processes) service.start();
        await transfer(owner, 1n);
        const state = () => `failures: ${failures.map(String).join("; ")}; taken by the competitor: ${taken.length}`;
        await receiver.waitFor("first change's POST", () => receiver.requests.length === 1, state);
        // The next change of the subscription is sent once the first is recorded delivered (order per subscription).
        await transfer(owner, 2n);
        await receiver.waitFor("second change's POST", () => receiver.requests.length === 2, state);

        expect(receiver.errors).to.deep.equal([]);
        expect(taken, "taken by another owner while the attempt ran").to.deep.equal([]);
        // Each once: the slow one was neither sent again by the other process nor retried.
        expect(receiver.requests.map((request) => request.body.balance)).to.deep.equal([1n, 3n]);
        expect(new Set(receiver.requests.map((request) => request.deliveryId)).size).to.equal(2);
        const [slow] = receiver.requests;
        const attempts = await processes[0].service.queue.attempts(id);
        expect(attempts.filter((attempt) => attempt.deliveryId === slow.deliveryId).map((attempt) => attempt.ok)).to.deep.equal([true]);
        expect(attempts.find((attempt) => attempt.deliveryId === slow.deliveryId)!.latencyMs).to.be.at.least(2 * leaseMs);
        expect(failures).to.deep.equal([]);
      } finally {
        for (const { service, keys } of processes) {
          await service.close();
          await keys.close();
        }
        await receiver.close();
      }
    });
  }
});
