import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { Contract, getAddress, hexlify, NonceManager, randomBytes, Wallet, type JsonRpcProvider } from "ethers";

import { ApiKeys } from "../../../../src/api/keys/api-keys.ts";
import { WebhookService } from "../../../../src/api/webhooks/webhook-service.ts";
import { devAccount } from "../../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../../src/devnet/op-devnet.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../../src/devnet/source-chains.ts";
import { WebhookReceiver } from "../../../../src/devnet/webhook-receiver.ts";
import { POSTGRES, startPostgres, type TestPostgres } from "../../../helpers/postgres.ts";
import { requireService } from "../../../helpers/services.ts";
import { testWebhookService } from "../../../helpers/webhooks.ts";

const TRANSFERS = 6;

/**
 * Several API processes on one key database (the workers of a cluster on a SQLite file, instances on several
 * hosts on PostgreSQL): one follows the chain, all send, and each change arrives once, in order.
 */
describe("Webhooks: two API processes on one key database", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let provider: JsonRpcProvider;
  let postgres: TestPostgres | undefined;
  let folder: string;

  before(async function () {
    sources = await startSourceFixtures();
    provider = devnetProvider(sources.anvil.rpcUrl, 1);
    folder = await mkdtemp(path.join(tmpdir(), "avn-webhooks-"));
  });
  after(async function () {
    provider?.destroy();
    await sources?.stop();
    await postgres?.stop();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  const databases: Array<[string, (context: Mocha.Context) => Promise<string>]> = [
    ["one SQLite file", async () => path.join(folder, "keys.sqlite")],
    [
      "PostgreSQL",
      async (context) => {
        postgres ??= await startPostgres();
        if (postgres === undefined) requireService(context, POSTGRES);
        return postgres.createDatabase();
      },
    ],
  ];

  for (const [name, location] of databases) {
    it(`delivers each change once and in order, on ${name}, also after the leader stops`, async function () {
      const where = await location(this);
      const receiver = new WebhookReceiver();
      const url = await receiver.listen();
      const failures: unknown[] = [];
      const processes: Array<{ keys: ApiKeys; service: WebhookService }> = [];
      for (const first of [true, false]) {
        // As a cluster's primary does: one process migrates before the others open the database.
        const keys = await ApiKeys.open(where, { migrate: first });
        const service = testWebhookService(keys.db, sources, {
          // Short, so that the other process takes the lead soon after the leader stops.
          leaseMs: 600,
          onError: (error) => failures.push(error),
        });
        processes.push({ keys, service });
      }
      try {
        const recipient = getAddress(hexlify(randomBytes(20)));
        const routes = processes[0].service.routes();
        const baseline = await routes.readEvm(sources.evm.erc20.toLowerCase(), recipient.toLowerCase(), undefined);
        const [subscription] = await processes[0].service.subscriptions.create(
          "key",
          [
            {
              chain: "ethereum",
              owner: recipient.toLowerCase(),
              asset: sources.evm.erc20.toLowerCase(),
              tokenId: "",
              url,
              attest: false,
              baselineBalance: baseline.balance,
              baselineBlock: baseline.block,
            },
          ],
          10,
        );
        for (const { service } of processes) service.start();
        const token = new Contract(
          sources.evm.erc20,
          ["function transfer(address to, uint256 amount) returns (bool)"],
          new NonceManager(new Wallet(devAccount(7).privateKey, provider)),
        );
        const transfer = async (amount: bigint) => (await (await token.getFunction("transfer")(recipient, amount)).wait()) as unknown;
        for (let amount = 1n; amount <= BigInt(TRANSFERS); amount++) await transfer(amount);
        await receiver.waitFor(() => receiver.deliveries.length >= TRANSFERS);

        // The leader stops (and gives the lead up); the other process follows from where it stopped.
        const leader = processes.find(({ service }) => service.followers[0].block !== undefined);
        expect(leader, "one process leads").to.not.equal(undefined);
        await leader!.service.close();
        await transfer(100n);
        await receiver.waitFor(() => receiver.deliveries.length >= TRANSFERS + 1);

        const balances = receiver.forSubscription(subscription.id).map((delivery) => delivery.body.balance);
        // 1, 1+2, 1+2+3…: every change, in order, none twice (a process sending one again would add an entry).
        const expected = Array.from({ length: TRANSFERS }, (_, index) => BigInt(((index + 1) * (index + 2)) / 2));
        expect(balances).to.deep.equal([...expected, expected[TRANSFERS - 1] + 100n]);
        expect(new Set(receiver.deliveries.map((delivery) => delivery.deliveryId)).size).to.equal(TRANSFERS + 1);
        expect(receiver.answered).to.have.length(TRANSFERS + 1);
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
