import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { Wallet } from "ethers";
import { hashTypedData, type Hex } from "viem";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";

import { loadCreditsConfig } from "../../../src/credits/config.ts";
import { startCreditsService } from "../../../src/credits/main.ts";
import { chargeRefunded, checkoutCompleted, dispute, event, newPayment, postWebhook } from "../../../src/credits/stripe-simulator.ts";
import { EXPIRY_SETTLE_MARGIN_SECONDS } from "../../../src/credits/voucher-book.ts";
import { runStripeCli } from "../../../src/credits/stripe-cli.ts";
import { stackFilePath, writeStackFile } from "../../../src/common/stack-file.ts";
import { creditsDomain, REDEMPTION_TYPES } from "@avn/protocol/credits/typed-data";
import { PRIMARY_ITEM, startCreditsFixture, TEST_WEBHOOK_SECRET, type CreditsFixture } from "../../helpers/credits.ts";
import { E18 } from "@avn/protocol/units";

/**
 * The credits service as Stripe and a buyer's browser reach it: a real HTTP server, its SQLite ledger,
 * webhooks signed by Stripe's own library, and a claim contract on a chain of its own.
 */
describe("credits service: Stripe webhooks, the ledger, redemptions into vouchers claimed on-chain", function () {
  this.timeout(120_000);
  let f: CreditsFixture;

  before(async function () {
    f = await startCreditsFixture();
  });
  after(async function () {
    await f?.stop();
  });

  const buyer = () => {
    const key = generatePrivateKey();
    return { key, account: privateKeyToAccount(key), address: privateKeyToAccount(key).address.toLowerCase() };
  };
  const get = async (route: string, base = f.service.url) => {
    const response = await fetch(`${base}${route}`);
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const post = async (route: string, body: unknown, base = f.service.url) => {
    const response = await fetch(`${base}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const balance = async (address: string, base = f.service.url) => (await get(`/credits/accounts/${address}`, base)).body;
  /** `who` pays `credits` (1 credit a cent) through a completed checkout. */
  const purchase = async (address: string, credits: number, payment = newPayment(), base = f.service.url) => {
    const answer = await postWebhook(
      `${base}/credits/webhooks/stripe`,
      checkoutCompleted({ payment, account: address, amountMinor: credits, currency: "usd" }),
      TEST_WEBHOOK_SECRET,
    );
    expect(answer.status).to.equal(200);
    return payment;
  };
  /** A redemption request signed by `who`'s wallet, as the Credits page sends it. */
  const redemption = async (
    who: ReturnType<typeof buyer>,
    fields: {
      itemId?: bigint;
      quantity?: bigint;
      maxPrice?: bigint;
      requestId?: Hex;
      issuedAt?: bigint;
      signer?: ReturnType<typeof buyer>;
    } = {},
  ) => {
    const quantity = fields.quantity ?? 1n;
    const message = {
      account: who.account.address,
      itemId: fields.itemId ?? BigInt(PRIMARY_ITEM),
      quantity,
      // The catalogue's price (1,000 credits a unit), as the page shows it.
      maxPrice: fields.maxPrice ?? 1_000n * quantity,
      recipient: who.account.address,
      requestId: fields.requestId ?? `0x${randomBytes(32).toString("hex")}`,
      issuedAt: fields.issuedAt ?? BigInt(Math.floor(Date.now() / 1000)),
    };
    const signature = await (fields.signer ?? who).account.signTypedData({
      domain: creditsDomain(900n, (await f.claims.getAddress()) as Hex),
      types: REDEMPTION_TYPES,
      primaryType: "CreditRedemption",
      message,
    });
    const redemption = Object.fromEntries(Object.entries(message).map(([key, value]) => [key, value.toString()]));
    return { redemption, signature };
  };

  describe("Stripe webhooks", function () {
    it("credits a completed checkout to the claim account it carried, once however often Stripe sends it", async function () {
      const who = buyer();
      const payment = newPayment();
      const completed = checkoutCompleted({ payment, account: who.address, amountMinor: 2_500, currency: "usd" });
      expect(await postWebhook(f.webhookUrl, completed, TEST_WEBHOOK_SECRET)).to.deep.equal({
        status: 200,
        body: { received: true, duplicate: false, outcome: "credited 2500" },
      });
      expect(await postWebhook(f.webhookUrl, completed, TEST_WEBHOOK_SECRET)).to.deep.equal({
        status: 200,
        body: { received: true, duplicate: true, outcome: "credited 2500" },
      });
      // Another event for the same checkout (Stripe retries with a new id after a timeout on its side): still once.
      const again = checkoutCompleted({ payment, account: who.address, amountMinor: 2_500, currency: "usd" });
      expect((await postWebhook(f.webhookUrl, again, TEST_WEBHOOK_SECRET)).body.outcome).to.equal("already credited");
      const account = await balance(who.address);
      expect([account.balance, account.owed]).to.deep.equal([2_500, 0]);
      expect(account.movements.map((movement: { kind: string; amount: number }) => [movement.kind, movement.amount])).to.deep.equal([
        ["purchase", 2_500],
      ]);
    });

    it("refuses a tampered body, a wrong secret, a stale timestamp and a missing signature with 400, changing nothing", async function () {
      const who = buyer();
      const body = checkoutCompleted({ payment: newPayment(), account: who.address, amountMinor: 9_999, currency: "usd" });
      const tampered = await postWebhook(f.webhookUrl, body, TEST_WEBHOOK_SECRET, {
        tamper: (payload) => payload.replace("9999", "99999"),
      });
      expect(tampered.status).to.equal(400);
      expect(tampered.body.message).to.match(
        /^Webhook signature check failed: No signatures found matching the expected signature for payload/,
      );
      expect((await postWebhook(f.webhookUrl, body, "whsec_someone_else")).status).to.equal(400);
      const stale = await postWebhook(f.webhookUrl, body, TEST_WEBHOOK_SECRET, { timestamp: Math.floor(Date.now() / 1000) - 600 });
      expect([stale.status, stale.body.message]).to.deep.equal([
        400,
        "Webhook signature check failed: Timestamp outside the tolerance zone",
      ]);
      const unsigned = await fetch(f.webhookUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect([unsigned.status, await unsigned.json()]).to.deep.equal([400, { status: 400, message: "Missing Stripe-Signature header" }]);
      expect((await balance(who.address)).balance).to.equal(0);
      // None of them was recorded as handled: the genuine event still credits.
      expect((await postWebhook(f.webhookUrl, body, TEST_WEBHOOK_SECRET)).body.outcome).to.equal("credited 9999");
    });

    it("takes back a refund that arrived before its purchase, and records a debt beyond the balance as owed", async function () {
      const who = buyer();
      const payment = newPayment();
      const early = await postWebhook(
        f.webhookUrl,
        chargeRefunded({ payment, amountMinor: 1_000, refundedMinor: 400, currency: "usd" }),
        TEST_WEBHOOK_SECRET,
      );
      expect([early.status, early.body.outcome]).to.deep.equal([200, "recorded before its purchase"]);
      await purchase(who.address, 1_000, payment);
      expect((await balance(who.address)).balance).to.equal(600);

      // Another buyer spends most of a purchase, then the whole charge is refunded: what was redeemed is
      // owed, not lost.
      const other = buyer();
      const payment2 = await purchase(other.address, 1_500);
      expect((await post("/credits/redemptions", await redemption(other))).status).to.equal(200);
      const refundAll = chargeRefunded({ payment: payment2, amountMinor: 1_500, refundedMinor: 1_500, currency: "usd" });
      expect((await postWebhook(f.webhookUrl, refundAll, TEST_WEBHOOK_SECRET)).body.outcome).to.equal("debited 1500");
      const after = await balance(other.address);
      expect([after.balance, after.owed]).to.deep.equal([0, 1_000]);
      // The next purchase pays the debt first.
      await purchase(other.address, 1_200);
      const paid = await balance(other.address);
      expect([paid.balance, paid.owed]).to.deep.equal([200, 0]);
    });

    it("takes a disputed amount and gives it back when the dispute is won", async function () {
      const who = buyer();
      const payment = await purchase(who.address, 800);
      const disputeId = `dp_${randomBytes(6).toString("hex")}`;
      expect(
        (await postWebhook(f.webhookUrl, dispute({ payment, disputeId, amountMinor: 800, currency: "usd" }), TEST_WEBHOOK_SECRET)).body
          .outcome,
      ).to.equal("debited 800");
      expect((await balance(who.address)).balance).to.equal(0);
      expect(
        (
          await postWebhook(
            f.webhookUrl,
            dispute({ payment, disputeId, amountMinor: 800, currency: "usd", closed: "won" }),
            TEST_WEBHOOK_SECRET,
          )
        ).body.outcome,
      ).to.equal("won: credited back 800");
      expect((await balance(who.address)).balance).to.equal(800);
    });

    it("keeps a lost dispute taken, and applies a dispute's closing that arrives before its opening once", async function () {
      const who = buyer();
      const payment = await purchase(who.address, 900);
      const lostId = `dp_${randomBytes(6).toString("hex")}`;
      await postWebhook(f.webhookUrl, dispute({ payment, disputeId: lostId, amountMinor: 300, currency: "usd" }), TEST_WEBHOOK_SECRET);
      const lost = await postWebhook(
        f.webhookUrl,
        dispute({ payment, disputeId: lostId, amountMinor: 300, currency: "usd", closed: "lost" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(lost.body.outcome).to.equal("lost: stays taken");
      expect((await balance(who.address)).balance).to.equal(600);
      // Stripe does not promise order: a closing (won) seen first records the dispute and leaves the credits; its late opening changes nothing.
      const lateId = `dp_${randomBytes(6).toString("hex")}`;
      const closedFirst = await postWebhook(
        f.webhookUrl,
        dispute({ payment, disputeId: lateId, amountMinor: 200, currency: "usd", closed: "won" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(closedFirst.body.outcome).to.equal("won: credited back 200");
      const openedLate = await postWebhook(
        f.webhookUrl,
        dispute({ payment, disputeId: lateId, amountMinor: 200, currency: "usd" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(openedLate.body.outcome).to.equal("already recorded");
      const account = await balance(who.address);
      expect([account.balance, account.owed]).to.deep.equal([600, 0]);
      expect(account.movements.map((movement: { kind: string; amount: number }) => [movement.kind, movement.amount])).to.deep.equal([
        ["purchase", 900],
        ["dispute", -300],
        ["dispute", -200],
        ["dispute_won", 200],
      ]);
    });

    it("ignores checkouts that are not for credits, and parks one whose account has a wrong checksum or is the zero address", async function () {
      // A buyer whose address can be mistyped by one letter's case (almost any: see mistypedAddress).
      let who = buyer();
      while (mistypedAddress(who.account.address) === undefined) who = buyer();
      const other = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({
          payment: newPayment(),
          account: who.address,
          amountMinor: 700,
          currency: "usd",
          metadata: { purpose: "merch" },
        }),
        TEST_WEBHOOK_SECRET,
      );
      expect(other.body.outcome).to.equal("ignored: not a credits checkout");
      const unmarked = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({ payment: newPayment(), account: who.address, amountMinor: 700, currency: "usd", metadata: {} }),
        TEST_WEBHOOK_SECRET,
      );
      expect(unmarked.body.outcome).to.equal("ignored: not a credits checkout");
      // One letter's case flipped in the checksummed address: a typo, not the buyer's wallet.
      const checksummed = who.account.address;
      const mistyped = mistypedAddress(checksummed)!;
      const typo = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({ payment: newPayment(), account: mistyped, amountMinor: 700, currency: "usd" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(typo.body.outcome).to.equal("not credited: the checkout's client_reference_id has a wrong checksum (a mistyped address)");
      const zero = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({ payment: newPayment(), account: `0x${"0".repeat(40)}`, amountMinor: 700, currency: "usd" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(zero.body.outcome).to.equal("not credited: the checkout's claim account is the zero address");
      expect((await balance(who.address)).balance).to.equal(0);
      // The checksummed address itself is the buyer's account.
      expect(
        (
          await postWebhook(
            f.webhookUrl,
            checkoutCompleted({ payment: newPayment(), account: checksummed, amountMinor: 700, currency: "usd" }),
            TEST_WEBHOOK_SECRET,
          )
        ).body.outcome,
      ).to.equal("credited 700");
    });

    it("acknowledges event types it does not handle, and parks a payment with no claim account or another currency", async function () {
      const ignored = await postWebhook(f.webhookUrl, event("customer.created", { id: "cus_1", object: "customer" }), TEST_WEBHOOK_SECRET);
      expect([ignored.status, ignored.body.outcome]).to.deep.equal([200, "ignored"]);
      const who = buyer();
      const euros = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({ payment: newPayment(), account: who.address, amountMinor: 500, currency: "eur" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(euros.body.outcome).to.equal("not credited: paid in eur, not usd");
      const nobody = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({ payment: newPayment(), account: "gamer42", amountMinor: 500, currency: "usd" }),
        TEST_WEBHOOK_SECRET,
      );
      expect(nobody.body.outcome).to.equal(
        "not credited: the checkout carried no claim account (client_reference_id must be a wallet address)",
      );
      const unpaid = await postWebhook(
        f.webhookUrl,
        checkoutCompleted({ payment: newPayment(), account: who.address, amountMinor: 500, currency: "usd", paid: false }),
        TEST_WEBHOOK_SECRET,
      );
      expect(unpaid.body.outcome).to.equal("awaiting payment (unpaid)");
      expect((await balance(who.address)).balance).to.equal(0);
    });
  });

  describe("redemptions", function () {
    it("turns credits into a voucher that the recipient claims on-chain, once, however often the request is sent", async function () {
      const who = buyer();
      await purchase(who.address, 2_500);
      const request = await redemption(who, { quantity: 2n });
      const first = await post("/credits/redemptions", request);
      expect(first.status).to.equal(200);
      expect(first.body.voucher).to.include({ recipient: who.account.address, itemId: "1", amount: (20n * E18).toString() });
      expect([first.body.price, first.body.status, first.body.replayed]).to.deep.equal([2_000, "issued", false]);
      const again = await post("/credits/redemptions", request);
      expect([again.body.voucher, again.body.replayed]).to.deep.equal([first.body.voucher, true]);
      expect((await balance(who.address)).balance).to.equal(500);

      const wallet = new Wallet(who.key, f.ethers.provider);
      await (await f.ethers.provider.getSigner(0)).sendTransaction({ to: wallet.address, value: E18 });
      const voucher = first.body.voucher;
      await (await f.claims.connect(wallet).claim({ ...voucher }, first.body.signature)).wait();
      expect(await f.primary.balanceOf(wallet.address)).to.equal(20n * E18);
      const account = await balance(who.address);
      expect(account.vouchers.map((entry: { status: string }) => entry.status)).to.deep.equal(["claimed"]);
    });

    it("refuses a request signed by another wallet, out of time, beyond the balance, for no such item or quantity, or malformed", async function () {
      const who = buyer();
      await purchase(who.address, 1_000);
      const forged = await post("/credits/redemptions", await redemption(who, { signer: buyer() }));
      expect(forged).to.deep.equal({
        status: 401,
        body: { status: 401, message: "The request was not signed by the claim account's wallet" },
      });
      const old = await post("/credits/redemptions", await redemption(who, { issuedAt: BigInt(Math.floor(Date.now() / 1000) - 3_600) }));
      expect(old.status).to.equal(400);
      expect(old.body.message).to.match(/sign it again/);
      const tooMuch = await post("/credits/redemptions", await redemption(who, { quantity: 2n }));
      expect(tooMuch).to.deep.equal({
        status: 402,
        body: { status: 402, message: "Not enough credits: the item costs 2000, the account holds 1000" },
      });
      expect((await post("/credits/redemptions", await redemption(who, { itemId: 7n }))).status).to.equal(404);
      expect((await post("/credits/redemptions", await redemption(who, { quantity: 6n }))).body.message).to.equal(
        "Ask for 1 to 5 of 10 primary tokens",
      );
      const malformed = await post("/credits/redemptions", { redemption: { account: "0x1" }, signature: "0x" });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.message).to.match(/^Invalid redemption: /);
      // The same request id for another redemption: refused, the first one stands.
      const requestId: Hex = `0x${randomBytes(32).toString("hex")}`;
      expect((await post("/credits/redemptions", await redemption(who, { requestId }))).status).to.equal(200);
      await purchase(who.address, 2_000);
      expect((await post("/credits/redemptions", await redemption(who, { requestId, quantity: 2n }))).status).to.equal(409);
      expect((await balance(who.address)).balance).to.equal(2_000);
    });

    it("gives the credits of a voucher nobody claimed back once the chain is past its expiry and the margin, when the contract refuses it", async function () {
      const who = buyer();
      await purchase(who.address, 1_000);
      const issued = await post("/credits/redemptions", await redemption(who));
      expect((await balance(who.address)).balance).to.equal(0);
      const wallet = new Wallet(who.key, f.ethers.provider);
      await (await f.ethers.provider.getSigner(0)).sendTransaction({ to: wallet.address, value: E18 });
      const expiry = Number(issued.body.voucher.expiry);
      // Just past its expiry: the contract refuses it, but the credits wait out the margin (a lagging RPC node could still be behind a claim).
      await f.ethers.provider.send("evm_setNextBlockTimestamp", [expiry + 1]);
      await f.ethers.provider.send("evm_mine", []);
      await expect(f.claims.connect(wallet).claim({ ...issued.body.voucher }, issued.body.signature)).to.be.revertedWithCustomError(
        f.claims,
        "VoucherClaims_Expired",
      );
      expect((await balance(who.address)).vouchers[0].status).to.equal("issued");
      await f.ethers.provider.send("evm_setNextBlockTimestamp", [expiry + EXPIRY_SETTLE_MARGIN_SECONDS]);
      await f.ethers.provider.send("evm_mine", []);
      expect((await balance(who.address)).balance, "at the margin's last second").to.equal(0);
      await f.ethers.provider.send("evm_setNextBlockTimestamp", [expiry + EXPIRY_SETTLE_MARGIN_SECONDS + 1]);
      await f.ethers.provider.send("evm_mine", []);
      const account = await balance(who.address);
      expect([account.balance, account.vouchers[0].status]).to.deep.equal([1_000, "expired"]);
      expect(account.movements.at(-1)).to.include({ kind: "voucher_expired", amount: 1_000 });
      // Asking again changes nothing: the credits came back once.
      expect((await balance(who.address)).balance).to.equal(1_000);
    });

    it("spends credits once when two redemptions race for them", async function () {
      const who = buyer();
      await purchase(who.address, 1_000);
      const [one, two] = await Promise.all([
        post("/credits/redemptions", await redemption(who)),
        post("/credits/redemptions", await redemption(who)),
      ]);
      expect([one.status, two.status].sort()).to.deep.equal([200, 402]);
      const account = await balance(who.address);
      expect([account.balance, account.vouchers.length]).to.deep.equal([0, 1]);
    });

    it("counts vouchers still out against the claim platform's stock, and refuses beyond it with 409", async function () {
      // A service with a fresh ledger over a platform holding 15 tokens: one voucher of 10, not two.
      const service = await f.startService();
      const stock = await f.primary.balanceOf(await f.claims.getAddress());
      await (
        await f.claims.connect(f.operator).withdrawInventory(await f.primary.getAddress(), f.operator.address, stock - 15n * E18)
      ).wait();
      try {
        const who = buyer();
        await purchase(who.address, 3_000, newPayment(), service.url);
        expect((await post("/credits/redemptions", await redemption(who), service.url)).status).to.equal(200);
        const refused = await post("/credits/redemptions", await redemption(who), service.url);
        expect(refused).to.deep.equal({
          status: 409,
          body: { status: 409, message: "Out of stock: the claim platform holds no more of this item than vouchers already promise" },
        });
        expect((await balance(who.address, service.url)).balance).to.equal(2_000);
      } finally {
        await (await f.primary.connect(f.operator).transfer(await f.claims.getAddress(), stock - 15n * E18)).wait();
        await service.close();
      }
    });

    it("refuses redemptions with 503, taking no credits, while the platform is paused or expects another issuer key", async function () {
      const who = buyer();
      const check = async (service: Awaited<ReturnType<typeof f.startService>>, message: string) => {
        await purchase(who.address, 1_000, newPayment(), service.url);
        expect(await post("/credits/redemptions", await redemption(who), service.url)).to.deep.equal({
          status: 503,
          body: { status: 503, message },
        });
        expect((await balance(who.address, service.url)).balance).to.equal(1_000);
      };
      // The issuer key rotated after a leak, the service still signing with the old one.
      const rotated = await f.startService({ CREDITS_ISSUER_KEY: Wallet.createRandom().privateKey });
      try {
        await check(rotated, "The claim platform expects another issuer key: redemptions are closed until the service signs with it");
      } finally {
        await rotated.close();
      }
      await (await f.claims.connect(f.operator).pause()).wait();
      const paused = await f.startService();
      try {
        await check(paused, "The claim platform is paused: redemptions are closed for now");
      } finally {
        await paused.close();
        await (await f.claims.connect(f.admin).unpause()).wait();
      }
    });

    it("answers a request made already with its voucher even while the platform is paused", async function () {
      const ledgerFile = path.join(f.dir, "replay-while-paused.sqlite");
      const who = buyer();
      const request = await redemption(who);
      const before = await f.startService({ CREDITS_DB: ledgerFile });
      let first;
      try {
        await purchase(who.address, 1_000, newPayment(), before.url);
        first = await post("/credits/redemptions", request, before.url);
        expect(first.status).to.equal(200);
      } finally {
        await before.close();
      }
      await (await f.claims.connect(f.operator).pause()).wait();
      // The same ledger, read by a service that sees the pause from its start.
      const during = await f.startService({ CREDITS_DB: ledgerFile });
      try {
        const again = await post("/credits/redemptions", request, during.url);
        expect([again.status, again.body.voucher, again.body.replayed]).to.deep.equal([200, first.body.voucher, true]);
        expect((await post("/credits/redemptions", await redemption(who), during.url)).status).to.equal(503);
      } finally {
        await during.close();
        await (await f.claims.connect(f.admin).unpause()).wait();
      }
    });

    it("takes a request signed for a contract wallet (ERC-1271) by its owner, and refuses one signed by another key", async function () {
      const owner = buyer();
      const wallet = await f.ethers.deployContract("MockContractWallet", [owner.account.address]);
      const address = (await wallet.getAddress()) as Hex;
      await purchase(address.toLowerCase(), 2_000);
      const signedBy = async (signer: ReturnType<typeof buyer>) => {
        const requestId: Hex = `0x${randomBytes(32).toString("hex")}`;
        const message = {
          account: address,
          itemId: BigInt(PRIMARY_ITEM),
          quantity: 1n,
          maxPrice: 1_000n,
          recipient: address,
          requestId,
          issuedAt: BigInt(Math.floor(Date.now() / 1000)),
        };
        const domain = creditsDomain(900n, (await f.claims.getAddress()) as Hex);
        // The wallet checks the owner's signature over the typed data's digest itself.
        const signature = await signer.account.sign({
          hash: hashTypedData({ domain, types: REDEMPTION_TYPES, primaryType: "CreditRedemption", message }),
        });
        return { redemption: Object.fromEntries(Object.entries(message).map(([key, value]) => [key, value.toString()])), signature };
      };
      expect((await post("/credits/redemptions", await signedBy(buyer()))).status).to.equal(401);
      const made = await post("/credits/redemptions", await signedBy(owner));
      expect([made.status, made.body.voucher.recipient]).to.deep.equal([200, address]);
      expect((await balance(address.toLowerCase())).balance).to.equal(1_000);
    });

    it("refuses a price above the one the wallet signed for, spending nothing", async function () {
      const who = buyer();
      await purchase(who.address, 3_000);
      const refused = await post("/credits/redemptions", await redemption(who, { quantity: 2n, maxPrice: 1_999n }));
      expect(refused).to.deep.equal({
        status: 409,
        body: {
          status: 409,
          message: "The price changed: 2 of 10 primary tokens now cost 2000 credits, more than the 1999 you signed for",
        },
      });
      expect((await balance(who.address)).balance).to.equal(3_000);
      // A wallet agreeing to more pays the price, not its ceiling.
      expect((await post("/credits/redemptions", await redemption(who, { quantity: 2n, maxPrice: 2_500n }))).body.price).to.equal(2_000);
      expect((await balance(who.address)).balance).to.equal(1_000);
    });

    it("still shows an account when the L2 does not answer, saying its vouchers were not checked", async function () {
      const rpc = await startSwitchableProxy(f.anvil.rpcUrl);
      const service = await f.startService({ CREDITS_L2_RPC_URL: rpc.url });
      try {
        const who = buyer();
        await purchase(who.address, 1_500, newPayment(), service.url);
        expect((await post("/credits/redemptions", await redemption(who), service.url)).status).to.equal(200);
        expect((await balance(who.address, service.url)).settled).to.equal(true);
        rpc.down = true;
        const view = await get(`/credits/accounts/${who.address}`, service.url);
        expect([view.status, view.body.settled, view.body.balance, view.body.vouchers[0].status]).to.deep.equal([
          200,
          false,
          500,
          "issued",
        ]);
      } finally {
        await service.close();
        await rpc.close();
      }
    });
  });

  describe("the local Stripe stand-in (npm run credits:stripe)", function () {
    it("sends a purchase, a refund and a dispute in the service's currency and rate, and refuses bad arguments", async function () {
      const projectRoot = await mkdtemp(path.join(tmpdir(), "stripe-cli-"));
      const service = await f.startService({ CREDITS_CURRENCY: "eur", CREDITS_PER_MINOR_UNIT: "10" });
      try {
        await writeStackFile(stackFilePath(projectRoot), {
          credits: { url: service.url, webhookUrl: `${service.url}/credits/webhooks/stripe`, webhookSecret: TEST_WEBHOOK_SECRET },
        });
        const run = async (...args: string[]) => {
          const out: string[] = [];
          const code = await runStripeCli(args, { projectRoot, print: (line) => out.push(line), printError: (line) => out.push(line) });
          return { code, out: out.join("\n") };
        };
        const who = buyer();
        const bought = await run("purchase", "--account", who.address, "--credits", "5000");
        expect(bought.code, bought.out).to.equal(0);
        expect(bought.out).to.match(/checkout\.session\.completed evt_local_\w+ \(payment pi_local_\w+\): credited 5000$/);
        const paymentIntent = /\(payment (pi_local_\w+)\)/.exec(bought.out)![1];
        expect((await run("refund", "--payment", paymentIntent, "--credits", "2000")).out).to.match(/: debited 2000$/);
        expect((await run("dispute", "--payment", paymentIntent, "--credits", "1000", "--id", "dp_cli")).out).to.match(/: debited 1000$/);
        expect((await balance(who.address, service.url)).balance).to.equal(2_000);
        expect(await run("purchase", "--account", who.address, "--credits", "5")).to.deep.equal({
          code: 1,
          out: "error: --credits must be a whole multiple of 10 (credits per cent)",
        });
        expect((await run("purchase", "--account", "gamer42", "--credits", "10")).code).to.equal(1);
        expect((await run("refund", "--credits", "10")).out).to.match(/--payment takes the payment intent id/);
      } finally {
        await service.close();
        await rm(projectRoot, { recursive: true, force: true });
      }
    });
  });

  describe("configuration", function () {
    it("lists every missing setting at once and never echoes a secret", function () {
      expect(() => loadCreditsConfig({})).to.throw(
        /STRIPE_WEBHOOK_SECRET[\s\S]*CREDITS_CATALOGUE[\s\S]*CREDITS_ISSUER_KEY[\s\S]*CREDITS_L2_RPC_URL[\s\S]*CREDITS_CLAIMS_CONTRACT/,
      );
      const secret = `0x${"ab".repeat(31)}`;
      expect(() => loadCreditsConfig({ CREDITS_ISSUER_KEY: secret }))
        .to.throw()
        .that.satisfies((error: Error) => !error.message.includes(secret));
    });

    it("refuses to start when the catalogue says otherwise than the claim contract, or the ledger is not a SQLite file", async function () {
      const base = {
        CREDITS_PORT: "0",
        STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
        CREDITS_ISSUER_KEY: f.issuer.privateKey,
        CREDITS_L2_RPC_URL: f.anvil.rpcUrl,
        CREDITS_CLAIMS_CONTRACT: await f.claims.getAddress(),
        LOG_LEVEL: "silent",
      };
      const mismatched = `${f.dir}/other-catalogue.json`;
      const { writeFile } = await import("node:fs/promises");
      await writeFile(
        mismatched,
        JSON.stringify({
          items: [
            { id: 1, name: "Licenses", priceCredits: 1, amountPerUnit: "1", kind: "NftInventory", asset: await f.primary.getAddress() },
          ],
        }),
      );
      await startCreditsService(loadCreditsConfig({ ...base, CREDITS_CATALOGUE: mismatched, CREDITS_DB: `${f.dir}/other.sqlite` })).then(
        () => expect.fail("started with a catalogue the contract contradicts"),
        (error: Error) =>
          expect(error.message).to.match(
            /item 1 \(Licenses\) is NftInventory of .* in the catalogue but Transfer of .* on the claim contract/,
          ),
      );
      await startCreditsService(
        loadCreditsConfig({ ...base, CREDITS_CATALOGUE: f.catalogue, CREDITS_DB: "postgres://user:secret@localhost/credits" }),
      ).then(
        () => expect.fail("started on PostgreSQL"),
        (error: Error) => expect(error.message).to.equal("the credits ledger is a SQLite file (CREDITS_DB), not a PostgreSQL server"),
      );
    });
  });
});

/** An HTTP proxy to `target` that answers 502 while `down` is set: an L2 RPC endpoint that stops answering. */
async function startSwitchableProxy(target: string) {
  const state = { down: false };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (state.down) {
        response.writeHead(502).end();
        return;
      }
      fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) })
        .then(async (upstream) =>
          response.writeHead(upstream.status, { "content-type": "application/json" }).end(Buffer.from(await upstream.arrayBuffer())),
        )
        .catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/**
 * A checksummed address with one letter's case flipped, a typo that the checksum catches, or undefined when
 * no flip leaves both cases in it (an address all in one case carries no checksum and is taken as written:
 * flipping the one letter whose case differs from all the others' would make one).
 */
function mistypedAddress(checksummed: string): string | undefined {
  const letters = (address: string) => address.slice(2);
  const mixedCase = (address: string) => /[a-f]/.test(letters(address)) && /[A-F]/.test(letters(address));
  for (let at = 2; at < checksummed.length; at += 1) {
    const char = checksummed[at];
    if (!/[a-f]/i.test(char)) continue;
    const flipped =
      checksummed.slice(0, at) + (char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()) + checksummed.slice(at + 1);
    if (mixedCase(flipped)) return flipped;
  }
  return undefined;
}
