import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import {
  Contract,
  getAddress,
  hexlify,
  NonceManager,
  randomBytes,
  Wallet,
  type ContractTransactionResponse,
  type JsonRpcProvider,
} from "ethers";

import { ApiKeys } from "../../../../src/api/keys/api-keys.ts";
import { FollowerStore, LeadershipLostError } from "../../../../src/api/webhooks/follower-store.ts";
import { WebhookService } from "../../../../src/api/webhooks/webhook-service.ts";
import { devAccount } from "../../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../../src/devnet/op-devnet.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../../src/devnet/source-chains.ts";
import { WebhookReceiver } from "../../../../src/devnet/webhook-receiver.ts";
import { testWebhookService } from "../../../helpers/webhooks.ts";

/**
 * What the followers keep across restarts and leaders: a subscription made while no follower ran, a pair
 * subscribed again after its last subscription was deleted, the lead's epochs, and a deleted subscription's
 * pending changes.
 */
describe("Webhooks: following across restarts and leaders", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let provider: JsonRpcProvider;
  let folder: string;
  let receiver: WebhookReceiver;
  let url: string;
  let token: Contract;

  before(async function () {
    sources = await startSourceFixtures();
    provider = devnetProvider(sources.anvil.rpcUrl, 1);
    folder = await mkdtemp(path.join(tmpdir(), "avn-webhook-following-"));
    receiver = new WebhookReceiver();
    url = await receiver.listen();
    token = new Contract(
      sources.evm.erc20,
      ["function transfer(address to, uint256 amount) returns (bool)"],
      new NonceManager(new Wallet(devAccount(7).privateKey, provider)),
    );
  });
  after(async function () {
    await receiver?.close();
    provider?.destroy();
    await sources?.stop();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  const transfer = async (owner: string, amount: bigint) => {
    const sent = (await token.getFunction("transfer")(owner, amount)) as ContractTransactionResponse;
    return (await sent.wait())!.blockNumber;
  };
  const serviceOn = (keys: ApiKeys) =>
    testWebhookService(keys.db, sources, {
      maxPerKey: 100,
      onError: () => undefined,
    });
  /** Subscribes `owner`'s ERC-20 holding; its 201's read is `at` (balance and block) when given, else the service's own. */
  const subscribe = async (service: WebhookService, owner: string, at?: { balance: bigint; block: bigint }) => {
    const baseline = at ?? (await service.routes().readEvm(sources.evm.erc20.toLowerCase(), owner.toLowerCase(), undefined));
    const [subscription] = await service.subscriptions.create(
      "key",
      [
        {
          chain: "ethereum",
          owner: owner.toLowerCase(),
          asset: sources.evm.erc20.toLowerCase(),
          tokenId: "",
          url,
          attest: false,
          baselineBalance: baseline.balance,
          baselineBlock: baseline.block,
        },
      ],
      100,
    );
    return subscription.id;
  };
  const balances = (id: string) => receiver.forSubscription(id).map((delivery) => delivery.body.balance);

  it("delivers a change made before the follower's first block to a subscription made before it", async function () {
    const keys = await ApiKeys.open(path.join(folder, "first-start.sqlite"));
    const service = serviceOn(keys);
    try {
      const owner = getAddress(hexlify(randomBytes(20)));
      const id = await subscribe(service, owner); // no follower has run on this database yet
      await transfer(owner, 5n);
      service.start();
      await receiver.waitFor(() => balances(id).length === 1);
      expect(receiver.forSubscription(id)[0].body).to.deep.include({ balance: 5n, previousBalance: 0n });
    } finally {
      await service.close();
      await keys.close();
    }
  });

  it("measures a pair subscribed again from its new 201, not from what was recorded before its deletion", async function () {
    const file = path.join(folder, "again.sqlite");
    const owner = getAddress(hexlify(randomBytes(20)));
    let keys = await ApiKeys.open(file);
    let service = serviceOn(keys);
    let second: string;
    try {
      service.start();
      const first = await subscribe(service, owner);
      await transfer(owner, 5n); // recorded: the pair's stored balance is 5
      await receiver.waitFor(() => balances(first).length === 1);
      await service.subscriptions.delete("key", first);
      const seven = await transfer(owner, 2n); // 7, watched by nobody
      second = await subscribe(service, owner, { balance: 7n, block: BigInt(seven) }); // its 201 read 7 there
    } finally {
      await service.close();
      await keys.close();
    }
    // A new process (or a new leader) loads the stored pair (5) and the subscription (7).
    keys = await ApiKeys.open(file, { migrate: false });
    service = serviceOn(keys);
    try {
      service.start();
      await transfer(owner, 3n); // 10
      await receiver.waitFor(() => balances(second).length === 1);
      expect(receiver.forSubscription(second)[0].body).to.deep.include({ balance: 10n, previousBalance: 7n });
    } finally {
      await service.close();
      await keys.close();
    }
  });

  it("cancels a deleted subscription's pending changes: kept on record, never sent", async function () {
    const keys = await ApiKeys.open(path.join(folder, "cancel.sqlite"));
    const service = serviceOn(keys);
    try {
      service.start();
      const [doomed, marker] = [getAddress(hexlify(randomBytes(20))), getAddress(hexlify(randomBytes(20)))];
      const doomedId = await subscribe(service, doomed);
      const markerId = await subscribe(service, marker);
      const answered = receiver.answered.length;
      receiver.status = () => 500;
      await transfer(doomed, 1n);
      await receiver.waitFor(() => receiver.answered.length > answered); // attempted and refused: pending
      await service.subscriptions.delete("key", doomedId);
      receiver.status = () => 200;
      await transfer(marker, 1n);
      await receiver.waitFor(() => balances(markerId).length === 1);
      // Its retries were due long before the marker's change was delivered (20 ms backoff).
      expect(balances(doomedId)).to.deep.equal([]);
      const states = await keys.db.selectFrom("webhook_events").select("state").where("subscription_id", "=", doomedId).execute();
      expect(states.map((row) => row.state)).to.deep.equal(["cancelled"]);
    } finally {
      receiver.status = () => 200;
      await service.close();
      await keys.close();
    }
  });

  it("reloads a leader that leads again after another did, and refuses a record under its old epoch", async function () {
    const keys = await ApiKeys.open(":memory:");
    try {
      const store = new FollowerStore(keys.db);
      const a = await store.lead("a", 1_000, 0);
      expect(a).to.not.equal(undefined);
      expect(await store.lead("b", 1_000, 500)).to.equal(undefined); // a's lease runs
      const b = await store.lead("b", 1_000, 2_000); // a's ran out: b takes it, a new epoch
      expect(b!.epoch).to.not.equal(a!.epoch);
      const cursor = { block: 1n, recent: [[1n, "0x01"]] as Array<[bigint, string]>, revision: 0n };
      const refused = await store.record("ethereum", "a", a!.epoch, 1_000, { cursor, pairs: [], changes: [] }, 2_100).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).to.be.instanceOf(LeadershipLostError);
      await store.resign("b");
      const again = await store.lead("a", 1_000, 2_200);
      expect(again!.epoch).to.not.equal(a!.epoch); // a must reload: b may have recorded blocks
      expect(await store.lead("a", 1_000, 2_300)).to.deep.equal(again); // renewing keeps the epoch
    } finally {
      await keys.close();
    }
  });
});
