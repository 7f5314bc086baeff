import { expect } from "chai";
import { Contract, getAddress, hexlify, randomBytes, Wallet, type JsonRpcProvider } from "ethers";

import { verifyWebhook } from "@avn/protocol/webhook-signature";
import { AvnApiError, AvnClient, verifyWebhook as verifySdkWebhook, WebhookSignatureError } from "../../../../packages/sdk/src/index.ts";
import { WebhookService } from "../../../../src/api/webhooks/webhook-service.ts";
import { devAccount } from "../../../../src/devnet/accounts.ts";
import { ABOVE_2_53, ERC1155_ITEM_ID, ERC1155_ITEM_AMOUNT } from "../../../../src/devnet/demo-holdings.ts";
import { devnetProvider } from "../../../../src/devnet/op-devnet.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../../src/devnet/source-chains.ts";
import { WebhookReceiver } from "../../../../src/devnet/webhook-receiver.ts";
import { startTestApi, type TestApi } from "../../../helpers/api.ts";
import { testWebhookService } from "../../../helpers/webhooks.ts";

const ERC20_ABI = ["function transfer(address to, uint256 amount) returns (bool)"];
const ERC1155_ABI = ["function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)"];
const randomOwner = () => getAddress(hexlify(randomBytes(20)));

describe("Webhooks: subscriptions, detection on a real anvil, signed deliveries", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let provider: JsonRpcProvider;
  let service: WebhookService;
  let api: TestApi;
  let receiver: WebhookReceiver;
  let hookUrl: string;
  const failures: unknown[] = [];

  before(async function () {
    sources = await startSourceFixtures();
    provider = devnetProvider(sources.anvil.rpcUrl, 1);
    // The ERC-1155 collector (account 10) pays its own transfers.
    const funding = await new Wallet(devAccount(0).privateKey, provider).sendTransaction({ to: sources.evm.collector, value: 10n ** 18n });
    await funding.wait();
    receiver = new WebhookReceiver();
    hookUrl = await receiver.listen();
    api = await startTestApi(sources, {
      withWebhooks: (db) => {
        service = testWebhookService(db, sources, {
          maxPerKey: 6,
          onError: (error) => failures.push(error),
        });
        return service.routes();
      },
    });
    service.start();
  });
  after(async function () {
    await service?.close();
    await api?.close();
    await receiver?.close();
    provider?.destroy();
    await sources?.stop();
  });

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${api.baseUrl}${path}`, {
      method,
      headers: { authorization: api.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const subscribe = async (body: Record<string, unknown>) => {
    const response = await call("POST", "/api/subscriptions", { chain: "ethereum", url: hookUrl, ...body });
    expect(response.status, await response.clone().text()).to.equal(201);
    return (await response.json()) as { id: string; secret: string };
  };
  const deleteAll = async () => {
    const { subscriptions } = (await (await call("GET", "/api/subscriptions")).json()) as { subscriptions: Array<{ id: string }> };
    for (const { id } of subscriptions) expect((await call("DELETE", `/api/subscriptions/${id}`)).status).to.equal(204);
  };
  afterEach(async function () {
    await deleteAll();
    expect(failures, "the follower's and the dispatcher's passes").to.deep.equal([]);
  });

  const send = async (from: number, contract: string, abi: string[], method: string, args: unknown[]) => {
    const signer = new Wallet(devAccount(from).privateKey, provider);
    const response = await (
      new Contract(contract, abi, signer) as unknown as Record<
        string,
        (...a: unknown[]) => Promise<{ wait(): Promise<{ blockNumber: number; blockHash: string }> }>
      >
    )[method](...args);
    return response.wait();
  };

  it("delivers an ERC-20 change once, signed, with exact integers and the block it happened in", async function () {
    const { holder, erc20 } = sources.evm;
    const recipient = randomOwner();
    const watched = await subscribe({ owner: recipient, asset: erc20 });
    const sender = await subscribe({ owner: holder, asset: erc20 });
    const amount = 2n ** 53n + 1n; // of the holder's ABOVE_2_53: above what a float holds exactly
    const receipt = await send(7, erc20, ERC20_ABI, "transfer", [recipient, amount]);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 1 && receiver.forSubscription(sender.id).length === 1);

    const [delivery] = receiver.forSubscription(watched.id);
    expect(delivery.body).to.deep.include({
      subscriptionId: watched.id,
      chain: "ethereum",
      owner: recipient.toLowerCase(),
      asset: erc20.toLowerCase(),
      balance: amount,
      previousBalance: 0n,
      block: BigInt(receipt.blockNumber),
      blockHash: receipt.blockHash,
    });
    expect(delivery.raw).to.contain(`"balance":${amount}`);
    expect(delivery.deliveryId).to.equal(delivery.body.id);
    verifyWebhook(delivery.raw, delivery.signature, watched.secret);
    expect(() => verifyWebhook(delivery.raw, delivery.signature, sender.secret)).to.throw(/signature/i);
    const [fromSide] = receiver.forSubscription(sender.id);
    expect(fromSide.body).to.deep.include({ balance: ABOVE_2_53 - amount, previousBalance: ABOVE_2_53 });

    const attempts = (await (await call("GET", `/api/subscriptions/${watched.id}/deliveries`)).json()) as {
      deliveries: Array<{ deliveryId: string; ok: boolean; status: number }>;
    };
    expect(attempts.deliveries).to.have.length(1);
    expect(attempts.deliveries[0]).to.include({ deliveryId: delivery.body.id, ok: true, status: 200 });
  });

  it("delivers an ERC-1155 change of the watched id only", async function () {
    const { collector, erc1155 } = sources.evm;
    const watched = await subscribe({ owner: collector, asset: erc1155, token_id: ERC1155_ITEM_ID.toString() });
    const otherId = await subscribe({ owner: collector, asset: erc1155, token_id: ABOVE_2_53.toString() });
    const recipient = randomOwner();
    await send(10, erc1155, ERC1155_ABI, "safeTransferFrom", [collector, recipient, ERC1155_ITEM_ID, 1n, "0x"]);
    // A later change of the other id: once it is delivered, the first block was followed too.
    await send(10, erc1155, ERC1155_ABI, "safeTransferFrom", [collector, recipient, ABOVE_2_53, 5n, "0x"]);
    await receiver.waitFor(() => receiver.forSubscription(otherId.id).length === 1);

    expect(receiver.forSubscription(watched.id).map((delivery) => delivery.body)).to.have.length(1);
    expect(receiver.forSubscription(watched.id)[0].body).to.deep.include({
      token_id: ERC1155_ITEM_ID.toString(),
      balance: ERC1155_ITEM_AMOUNT - 1n,
      previousBalance: ERC1155_ITEM_AMOUNT,
    });
    expect(receiver.forSubscription(otherId.id)[0].body).to.deep.include({ balance: ABOVE_2_53 - 5n, previousBalance: ABOVE_2_53 });
  });

  it("delivers a correction when a reorg undoes a delivered change", async function () {
    const { erc20 } = sources.evm;
    const recipient = randomOwner();
    const watched = await subscribe({ owner: recipient, asset: erc20 });
    const snapshot = await provider.send("evm_snapshot", []);
    await send(7, erc20, ERC20_ABI, "transfer", [recipient, 1_000n]);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 1);
    // The chain that wins has no such transfer, and is longer.
    await provider.send("evm_revert", [snapshot]);
    await provider.send("evm_mine", []);
    await provider.send("evm_mine", []);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 2);

    const [change, correction] = receiver.forSubscription(watched.id).map((delivery) => delivery.body);
    expect(change).to.deep.include({ balance: 1_000n, previousBalance: 0n });
    expect(correction).to.deep.include({ balance: 0n, previousBalance: 1_000n, correction: true });
    expect(correction.id).to.not.equal(change.id);
  });

  it("retries a refusing receiver with the same id, in order per subscription, and records each attempt", async function () {
    const { erc20 } = sources.evm;
    const recipient = randomOwner();
    const watched = await subscribe({ owner: recipient, asset: erc20 });
    let refusals = 3;
    receiver.status = () => (refusals-- > 0 ? 500 : 200);
    await send(7, erc20, ERC20_ABI, "transfer", [recipient, 1n]);
    await send(7, erc20, ERC20_ABI, "transfer", [recipient, 2n]);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 2);
    receiver.status = () => 200;

    expect(receiver.forSubscription(watched.id).map((delivery) => delivery.body.balance)).to.deep.equal([1n, 3n]);
    const { deliveries } = (await (await call("GET", `/api/subscriptions/${watched.id}/deliveries`)).json()) as {
      deliveries: Array<{ deliveryId: string; ok: boolean; status: number }>;
    };
    const first = receiver.forSubscription(watched.id)[0].body.id;
    expect(deliveries.filter((attempt) => attempt.deliveryId === first).map((attempt) => attempt.status)).to.deep.equal([
      200, 500, 500, 500,
    ]);
  });

  it("replays the changes since a time with their ids", async function () {
    const { erc20 } = sources.evm;
    const recipient = randomOwner();
    const watched = await subscribe({ owner: recipient, asset: erc20 });
    const since = new Date(Date.now() - 1_000).toISOString();
    await send(7, erc20, ERC20_ABI, "transfer", [recipient, 9n]);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 1);
    const response = await call("POST", `/api/subscriptions/${watched.id}/replay?since=${encodeURIComponent(since)}`);
    expect(response.status).to.equal(202);
    expect(await response.json()).to.deep.equal({ replayed: 1 });
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 2);
    const [first, again] = receiver.forSubscription(watched.id);
    expect(again.raw).to.equal(first.raw);
  });

  it("delivers a Solana change on a token account created after the subscription", async function () {
    const { ledger } = sources;
    const { splMint } = sources.svm;
    const wallet = await ledger.newWallet();
    const watched = await subscribe({ chain: "solana", owner: wallet.address, asset: splMint });
    // A new associated account (empty: no change), then tokens minted to it, then a second, plain account.
    const associated = await ledger.associatedAccount(wallet.address, splMint);
    await ledger.mintTo(splMint, associated, 500n);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 1);
    const extra = await ledger.extraAccount(wallet.address, splMint);
    await ledger.mintTo(splMint, extra, 7n);
    await receiver.waitFor(() => receiver.forSubscription(watched.id).length === 2);

    const [first, second] = receiver.forSubscription(watched.id);
    expect(first.body).to.deep.include({ chain: "solana", owner: wallet.address, asset: splMint, balance: 500n, previousBalance: 0n });
    expect(first.body).to.not.have.property("blockHash");
    expect(second.body).to.deep.include({ balance: 507n, previousBalance: 500n });
    expect(second.body.block).to.be.greaterThan(first.body.block as bigint);
    verifyWebhook(second.raw, second.signature, watched.secret);
  });

  it("works from the SDK: create, list, deliveries, delete, and verifyWebhook on what arrives", async function () {
    const client = new AvnClient({ baseUrl: api.baseUrl, apiKey: api.apiKey, retries: 0 });
    const { erc20 } = sources.evm;
    const recipient = randomOwner();
    const created = await client.subscriptions.create({ chain: "ethereum", owner: recipient, asset: erc20, url: hookUrl });
    const [second] = await client.subscriptions.create([{ chain: "ethereum", owner: randomOwner(), asset: erc20, url: hookUrl }]);
    const { subscriptions } = await client.subscriptions.list();
    expect(subscriptions.map((subscription) => subscription.id).sort()).to.deep.equal([created.id, second.id].sort());
    expect(await client.subscriptions.get(created.id)).to.include({ owner: recipient.toLowerCase(), balance: 0n, state: "active" });

    await send(7, erc20, ERC20_ABI, "transfer", [recipient, 42n]);
    await receiver.waitFor(() => receiver.forSubscription(created.id).length === 1);
    const [delivery] = receiver.forSubscription(created.id);
    const event = verifySdkWebhook(delivery.raw, delivery.signature, created.secret);
    expect(event).to.deep.include({
      id: delivery.deliveryId,
      subscriptionId: created.id,
      balance: 42n,
      previousBalance: 0n,
      correction: false,
    });
    expect(() => verifySdkWebhook(delivery.raw.replace('"balance":42', '"balance":43'), delivery.signature, created.secret)).to.throw(
      WebhookSignatureError,
    );
    expect((await client.subscriptions.deliveries(created.id))[0]).to.include({ deliveryId: event.id, ok: true });

    await client.subscriptions.delete(second.id);
    const error = await client.subscriptions.get(second.id).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).to.be.instanceOf(AvnApiError).and.include({ status: 404 });
  });

  describe("the routes", function () {
    it("lists, gets and deletes a key's subscriptions; the secret is shown once", async function () {
      const created = await call("POST", "/api/subscriptions", [
        { chain: "ethereum", owner: randomOwner(), asset: sources.evm.erc20, url: hookUrl },
        { chain: "ethereum", owner: randomOwner(), asset: sources.evm.erc721, url: hookUrl },
      ]);
      expect(created.status).to.equal(201);
      const { subscriptions } = (await created.json()) as { subscriptions: Array<{ id: string; secret: string }> };
      expect(subscriptions).to.have.length(2);
      const page = (await (await call("GET", "/api/subscriptions?limit=1")).json()) as {
        subscriptions: Array<Record<string, unknown>>;
        next: string;
      };
      expect(page.subscriptions).to.have.length(1);
      expect(page.subscriptions[0]).to.not.have.property("secret");
      const rest = (await (await call("GET", `/api/subscriptions?after=${page.next}`)).json()) as {
        subscriptions: unknown[];
        next?: string;
      };
      expect(rest.subscriptions).to.have.length(1);
      expect(rest.next).to.equal(undefined);
      const one = await call("GET", `/api/subscriptions/${subscriptions[0].id}`);
      expect(one.status).to.equal(200);
      expect(await one.json()).to.include({ id: subscriptions[0].id, state: "active", balance: 0 });
      expect((await call("DELETE", `/api/subscriptions/${subscriptions[0].id}`)).status).to.equal(204);
      expect((await call("GET", `/api/subscriptions/${subscriptions[0].id}`)).status).to.equal(404);
      expect((await call("DELETE", `/api/subscriptions/${subscriptions[0].id}`)).status).to.equal(404);
    });

    const expectError = async (response: Response, status: number, message: RegExp) => {
      const body = (await response.json()) as { status: number; message: string };
      expect(response.status, body.message).to.equal(status);
      expect(body.message).to.match(message);
    };

    it("refuses bad input with a 400 naming the field, and creates nothing of a refused array", async function () {
      const good = { chain: "ethereum", owner: randomOwner(), asset: sources.evm.erc20, url: hookUrl };
      await expectError(await call("POST", "/api/subscriptions", { ...good, owner: "0x12" }), 400, /^owner/);
      await expectError(await call("POST", "/api/subscriptions", { ...good, url: "ftp://example.com/" }), 400, /^url/);
      await expectError(await call("POST", "/api/subscriptions", { ...good, token_id: "-1" }), 400, /^token_id/);
      await expectError(await call("POST", "/api/subscriptions", { ...good, chain: "bitcoin" }), 400, /chain/);
      await expectError(
        await call("POST", "/api/subscriptions", { ...good, chain: "solana" }),
        400,
        /^owner must be a base58 Solana address/,
      );
      await expectError(
        await call("POST", "/api/subscriptions", {
          ...good,
          chain: "solana",
          owner: sources.svm.owner,
          asset: sources.svm.splMint,
          token_id: "1",
        }),
        400,
        /^token_id is only for ethereum/,
      );
      await expectError(await call("POST", "/api/subscriptions", { ...good, extra: 1 }), 400, /extra|additional/);
      await expectError(await call("POST", "/api/subscriptions", [good, { ...good, asset: "0xzz" }]), 400, /^\[1\]\.asset/);
      await expectError(await call("POST", "/api/subscriptions", { ...good, asset: randomOwner() }), 404, /^asset/);
      await expectError(await call("POST", "/api/subscriptions", []), 400, /body/);
      const { subscriptions } = (await (await call("GET", "/api/subscriptions")).json()) as { subscriptions: unknown[] };
      expect(subscriptions).to.deep.equal([]);
    });

    it("refuses URLs that resolve to private, loopback or link-local addresses unless allowed", async function () {
      const guarded = await startTestApi(sources, { withWebhooks: () => ({ ...service.routes(), allowPrivate: false }) });
      try {
        const port = new URL(hookUrl).port;
        for (const url of [
          hookUrl,
          `http://localhost:${port}/hook`,
          `http://[::1]:${port}/hook`,
          "http://10.1.2.3/hook",
          "http://169.254.169.254/",
        ]) {
          const response = await fetch(`${guarded.baseUrl}/api/subscriptions`, {
            method: "POST",
            headers: { authorization: guarded.apiKey, "content-type": "application/json" },
            body: JSON.stringify({ chain: "ethereum", owner: randomOwner(), asset: sources.evm.erc20, url }),
          });
          await expectError(response, 400, /^url resolves to a private, loopback or link-local address/);
        }
      } finally {
        await guarded.close();
      }
    });

    it("refuses more pairs than WEBHOOK_MAX_PER_KEY, as a whole", async function () {
      const item = () => ({ chain: "ethereum", owner: randomOwner(), asset: sources.evm.erc20, url: hookUrl });
      expect((await call("POST", "/api/subscriptions", [item(), item(), item(), item()])).status).to.equal(201);
      await expectError(await call("POST", "/api/subscriptions", [item(), item(), item()]), 400, /watches 4 of at most 6 pairs/);
      expect((await call("POST", "/api/subscriptions", [item(), item()])).status).to.equal(201);
    });

    it("refuses another key's subscription as unknown", async function () {
      const mine = await subscribe({ owner: randomOwner(), asset: sources.evm.erc20 });
      const other = (await api.keys.create("another")).key;
      const response = await fetch(`${api.baseUrl}/api/subscriptions/${mine.id}`, { headers: { authorization: other } });
      expect(response.status).to.equal(404);
      const listed = await fetch(`${api.baseUrl}/api/subscriptions`, { headers: { authorization: other } });
      expect(await listed.json()).to.deep.equal({ subscriptions: [] });
    });
  });
});
