import path from "node:path";

import { expect } from "chai";
import { ContractFactory, NonceManager, Wallet, parseEther, type JsonRpcProvider } from "ethers";
import hre from "hardhat";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import type { Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";

import {
  chargeRefunded,
  checkoutCompleted,
  newPayment,
  postWebhook,
  type SimulatedPayment,
} from "../../../src/credits/stripe-simulator.ts";
import { CREDIT_ITEMS, deployClaimPlatform, startCreditsChannel, type CreditsChannel } from "../../../src/devnet/credits-setup.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import type { RunningWebServer } from "../../../src/web/web-server.ts";
import { GameItem__factory, PrimaryToken__factory, VoucherClaims__factory } from "../../../typechain-types/index.ts";
import { eventually, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { stackOfTestDevnet } from "../../helpers/stack.ts";
import {
  openConnected,
  screenshot,
  screenshotFailure,
  seriousAccessibilityViolations,
  sendTransaction,
  VIEWPORTS,
  waitForText,
} from "../../helpers/web/browser.ts";
import { chromiumOrSkip, serveWebApp } from "../../helpers/web/web-app.ts";
import { TestWallet } from "../../helpers/web/test-wallet.ts";
import { E18 } from "@avn/protocol/units";

/** What the devnet's credits service sells, as `npm start` defines it (credits-setup.ts). */
const PRICES = { primary: 1_000, gameItem: 500, license: 100_000 } as const;

interface ServiceAccount {
  balance: number;
  owed: number;
  movements: Array<{ kind: string; amount: number }>;
  vouchers: Array<{ voucher: { voucherId: Hex; itemId: string; amount: string }; status: string }>;
}

/**
 * The Credits page in a real Chromium on the shared devnet, with the credits channel as `npm start` runs it
 * (the claim platform stocked through the bridge, the example game minting for it, the demo catalogue, the
 * service with its SQLite ledger), and a fresh wallet whose purchases Stripe's signed webhooks report. The
 * page is driven as a buyer would; every effect is checked where it lands: the ledger through the service,
 * items on-chain.
 */
describe("web app: credits in Chromium", function () {
  this.timeout(600_000);
  let browser: Browser | undefined;
  let net: TestDevnet;
  let stack: StackFile;
  let channel: CreditsChannel | undefined;
  let web: RunningWebServer | undefined;
  let l1: JsonRpcProvider | undefined;
  let l2: JsonRpcProvider | undefined;
  let claimsAddress: string;
  let gameItemAddress: string;
  const contexts: BrowserContext[] = [];
  // The buyer: a wallet of its own, carried from one step to the next with its page and its purchase.
  const buyerKey = generatePrivateKey();
  let wallet: TestWallet;
  let page: Page;
  let purchase: SimulatedPayment;

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    stack = stackOfTestDevnet(net);
    l1 = devnetProvider(net.devnet.l1.rpcUrl, net.devnet.l1.chainId);
    l2 = devnetProvider(net.devnet.l2.rpcUrl, net.devnet.l2.chainId);
    const deployer = net.devnet.accounts.deployer;
    const l2Contracts = stack.contracts!.l2!;

    // As `npm start` does: the claim platform first, then the game that lets it mint, then the channel.
    const issuer = Wallet.createRandom();
    claimsAddress = await deployClaimPlatform(l2, deployer, issuer.address);
    const artifact = await hre.artifacts.readArtifact("GameItem");
    const game = await new ContractFactory(artifact.abi, artifact.bytecode, new NonceManager(new Wallet(deployer.privateKey, l2))).deploy(
      l2Contracts.AttestationVerifier,
      // The game's verified path (not used here) asks for a balance of this L1 token.
      stack.contracts!.l1!.PrimaryToken,
      1n,
      3_600n,
      claimsAddress,
      `0x${"00".repeat(32)}`, // bytes32 zero: no condition claims
      "0x0000000000000000000000000000000000000000", // no proof claims
      0n,
    );
    await game.waitForDeployment();
    gameItemAddress = await game.getAddress();
    channel = await startCreditsChannel({
      workDir: path.join(net.stateDir, "credits-web"),
      l1,
      l2,
      l2RpcUrl: net.devnet.l2.rpcUrl,
      deployer,
      contracts: {
        l1PrimaryToken: net.deployment!.l1PrimaryToken,
        l1StandardBridge: net.devnet.l1Contracts.L1StandardBridge,
        l2: {
          PrimaryToken: l2Contracts.PrimaryToken,
          StakedToken: l2Contracts.StakedToken,
          NodeLicense: l2Contracts.NodeLicense,
          GameItem: gameItemAddress,
          VoucherClaims: claimsAddress,
        },
      },
      issuerKey: issuer.privateKey,
      port: 0,
      onProgress: () => undefined,
    });

    const withCredits: StackFile = {
      ...stack,
      credits: channel.stack,
      contracts: { ...stack.contracts, l2: { ...l2Contracts, VoucherClaims: claimsAddress, GameItem: gameItemAddress } },
    };
    web = await serveWebApp(withCredits);

    // The buyer has no tokens; L2 ETH pays for its claims.
    wallet = new TestWallet(
      buyerKey,
      [
        { chainId: net.devnet.l1.chainId, rpcUrl: net.devnet.l1.rpcUrl },
        { chainId: net.devnet.l2.chainId, rpcUrl: net.devnet.l2.rpcUrl },
      ],
      // On the L1 at first: the page must have it switch before it signs a request for the L2.
      net.devnet.l1.chainId,
    );
    await (await new Wallet(deployer.privateKey, l2).sendTransaction({ to: wallet.address, value: parseEther("1") })).wait();
  });

  after(async function () {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
    await browser?.close();
    await web?.close();
    await channel?.service.close();
    l1?.destroy();
    l2?.destroy();
  });

  // A failed step leaves a screenshot of each page open, to see what the user would have seen.
  afterEach(async function () {
    await screenshotFailure(this.currentTest, contexts, "credits-");
  });

  const card = (itemId: number): Locator => page.locator(`[data-testid="catalogue-item"][data-item-id="${itemId}"]`);
  const voucherRow = (itemId: number): Locator => page.locator(`[data-testid="voucher"][data-item-id="${itemId}"]`);
  const balance = () => page.getByTestId("credit-balance");
  /** The ledger as the service reports it (the page is not asked). */
  const serviceAccount = async (): Promise<ServiceAccount> => {
    const response = await fetch(`${channel!.service.url}/credits/accounts/${wallet.address}`);
    expect(response.status).to.equal(200);
    return (await response.json()) as ServiceAccount;
  };

  /** Presses Redeem on `item`'s card and returns the outcome the card shows (a voucher made, or why not). */
  const redeem = async (item: Locator): Promise<string> => {
    const control = item.locator(".redeem");
    const before = Number((await control.getAttribute("data-attempts")) ?? "0");
    await item.getByRole("button", { name: "Redeem", exact: true }).click();
    const status = item.getByTestId("redeem-status");
    await eventually(
      async () =>
        Number(await control.getAttribute("data-attempts")) > before &&
        /\b(success|error)\b/.test((await status.getAttribute("class")) ?? ""),
      (done) => done,
      30_000,
    );
    return (await status.textContent()) ?? "";
  };

  it("lets the page reach its credits service besides itself and the RPC endpoints, and nothing else (content security policy)", async function () {
    const policy = (await fetch(`${web!.url}/credits`)).headers.get("content-security-policy") ?? "";
    const connect = policy.split("; ").find((directive) => directive.startsWith("connect-src "));
    const origins = [net.devnet.l1.rpcUrl, net.devnet.l2.rpcUrl, net.devnet.l2.wsUrl, channel!.service.url].map(
      (url) => new URL(url).origin,
    );
    expect(connect).to.equal(`connect-src 'self' ${[...new Set(origins)].join(" ")}`);
  });

  it("shows a new wallet 0 credits and, since this service takes no payments, the command that simulates one", async function () {
    page = await openConnected(browser!, `${web!.url}/credits`, wallet, contexts);
    await waitForText(balance(), /^0 credits$/);
    await page.getByTestId("no-movements").waitFor();
    await page.getByTestId("no-vouchers").waitFor();
    // The catalogue as the service defines it, each unit in words.
    expect(await page.getByTestId("catalogue-item").count()).to.equal(4);
    expect(await card(CREDIT_ITEMS.primary).getByTestId("unit-delivers").textContent()).to.equal("100 primary tokens");
    expect(await card(CREDIT_ITEMS.staked).getByTestId("unit-delivers").textContent()).to.equal("100 staked tokens");
    expect(await card(CREDIT_ITEMS.license).getByTestId("unit-delivers").textContent()).to.equal("1 node license");
    expect(await card(CREDIT_ITEMS.gameItem).getByTestId("unit-delivers").textContent()).to.equal("1 minted item");

    await page.getByRole("button", { name: "Buy credits", exact: true }).click();
    const command = await waitForText(page.getByTestId("purchase-command"), /^npm run/);
    expect(command).to.equal(`npm run credits:stripe -- purchase --account ${wallet.address} --credits 5000`);
    await waitForText(page.getByTestId("simulated-purchase"), /takes no payments \(it has no Stripe account\): purchases are simulated/);
  });

  it("shows a purchase of 2,500 credits once Stripe's signed webhook reports it", async function () {
    purchase = newPayment();
    const answer = await postWebhook(
      channel!.stack.webhookUrl,
      checkoutCompleted({ payment: purchase, account: wallet.address, amountMinor: 2_500, currency: "usd" }),
      channel!.stack.webhookSecret,
    );
    expect(answer.status).to.equal(200);
    // The page reads the account every 3 s.
    await waitForText(balance(), /^2,500 credits$/, 15_000);
    const newest = page.getByTestId("movement").first();
    expect(await newest.getAttribute("data-kind")).to.equal("purchase");
    expect(await newest.getByTestId("movement-amount").textContent()).to.equal("+2,500");
  });

  it("switches the wallet to the L2, redeems 1 × 100 primary tokens once although its first answer is lost, then 2 game items", async function () {
    // On the L1, Redeem gives way to the switch: the request is signed for the L2's domain.
    await card(CREDIT_ITEMS.primary).getByRole("button", { name: "Switch to Devnet L2" }).click();
    await eventually(
      async () => wallet.currentChainId,
      (chainId) => chainId === net.devnet.l2.chainId,
    );
    // A node license costs more than the balance: Redeem says so, disabled.
    const license = card(CREDIT_ITEMS.license);
    await waitForText(license.getByTestId("redeem-blocker"), /^This costs 100,000 credits; you hold 2,500 credits\.$/);
    expect(await license.getByRole("button", { name: "Redeem", exact: true }).isDisabled()).to.equal(true);

    // A request the wallet's user rejects is not sent: nothing is spent, and the page says why.
    wallet.rejectNext();
    expect(await redeem(card(CREDIT_ITEMS.primary))).to.equal("Not redeemed: You rejected the request in your wallet.");
    expect((await serviceAccount()).balance).to.equal(2_500);

    // The first request reaches the service, but its answer is lost on the way back (the browser sees a
    // network failure). Pressing Redeem again sends the same request: one voucher, credits spent once.
    let reachedService = 0;
    await page.route(
      `${channel!.service.url}/credits/redemptions`,
      async (route) => {
        if (route.request().method() !== "POST") return route.continue();
        await route.fetch();
        reachedService += 1;
        await route.abort("failed");
      },
      { times: 1 },
    );
    const lost = await redeem(card(CREDIT_ITEMS.primary));
    expect(lost).to.match(/^The credits service did not answer .* Press Redeem again with the same quantity: the same request is sent/);
    expect(reachedService).to.equal(1);
    let account = await serviceAccount();
    expect([account.balance, account.vouchers.length]).to.deep.equal([2_500 - PRICES.primary, 1]);
    expect(wallet.typedDataSignatures).to.equal(1);

    const retried = await redeem(card(CREDIT_ITEMS.primary));
    expect(retried).to.equal(
      "This request had been made already: its voucher (100 primary tokens) is under Your vouchers, and no credits were spent twice.",
    );
    // The same signed request went again: the wallet was not asked twice.
    expect(wallet.typedDataSignatures).to.equal(1);
    account = await serviceAccount();
    expect([account.balance, account.vouchers.length]).to.deep.equal([2_500 - PRICES.primary, 1]);
    expect(account.movements.filter((movement) => movement.kind === "redemption").map((movement) => movement.amount)).to.deep.equal([
      -PRICES.primary,
    ]);

    const game = card(CREDIT_ITEMS.gameItem);
    await game.getByLabel("Quantity").fill("2");
    await waitForText(game.getByTestId("item-total"), /^1,000 credits for 2 minted items$/);
    expect(await redeem(game)).to.equal("Voucher made: 2 minted items for 1,000 credits. Claim it under Your vouchers.");
    expect(wallet.typedDataSignatures).to.equal(2);
    account = await serviceAccount();
    expect(account.balance).to.equal(2_500 - PRICES.primary - 2 * PRICES.gameItem);
    expect(account.vouchers.map((view) => [view.voucher.itemId, view.voucher.amount, view.status])).to.deep.equal([
      [String(CREDIT_ITEMS.primary), (100n * E18).toString(), "issued"],
      [String(CREDIT_ITEMS.gameItem), "2", "issued"],
    ]);
    await waitForText(balance(), /^500 credits$/, 15_000);
    await eventually(
      () => page.getByTestId("voucher").count(),
      (count) => count === 2,
    );
    for (const itemId of [CREDIT_ITEMS.primary, CREDIT_ITEMS.gameItem]) {
      expect(await voucherRow(itemId).getByTestId("voucher-status").textContent()).to.equal("Issued, not yet claimed");
    }
  });

  it("claims both vouchers from the page (a paused contract's refusal decoded first): 100 primary tokens and 2 game items arrive, and the page shows them claimed", async function () {
    const primary = PrimaryToken__factory.connect(stack.contracts!.l2!.PrimaryToken, l2);
    const game = GameItem__factory.connect(gameItemAddress, l2);
    const claims = VoucherClaims__factory.connect(claimsAddress, l2);
    expect([await primary.balanceOf(wallet.address), await game.balanceOf(wallet.address)]).to.deep.equal([0n, 0n]);

    // While the operator has paused claims, the contract's refusal is shown decoded, before the wallet opens.
    const operator = claims.connect(new NonceManager(new Wallet(net.devnet.accounts.deployer.privateKey, l2)));
    await (await operator.pause()).wait();
    const paused = await sendTransaction(voucherRow(CREDIT_ITEMS.primary), "Claim", { expectFailure: true });
    expect(paused).to.equal("Failed: The contract refused: enforced pause (EnforcedPause).");
    await (await operator.unpause()).wait();

    await sendTransaction(voucherRow(CREDIT_ITEMS.primary), "Claim", { mayLeave: true });
    expect(await primary.balanceOf(wallet.address)).to.equal(100n * E18);
    await waitForText(page.getByTestId("claim-done"), /^Voucher claimed: 100 primary tokens delivered to your wallet\.$/);
    await sendTransaction(voucherRow(CREDIT_ITEMS.gameItem), "Claim", { mayLeave: true });
    expect(await game.balanceOf(wallet.address)).to.equal(2n);
    for (const view of (await serviceAccount()).vouchers)
      expect(await claims.isClaimed(view.voucher.voucherId), view.voucher.itemId).to.equal(true);

    // The service sees the claims on-chain; the page follows it, and the Claim buttons are gone.
    for (const itemId of [CREDIT_ITEMS.primary, CREDIT_ITEMS.gameItem]) {
      await waitForText(voucherRow(itemId).getByTestId("voucher-status"), /^Claimed$/, 15_000);
      expect(await voucherRow(itemId).getByRole("button", { name: "Claim" }).count(), `Claim of item ${itemId}`).to.equal(0);
    }
    expect(await balance().textContent()).to.equal("500 credits");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);
    await screenshot(page, "credits-claimed");
  });

  it("refuses what the balance does not cover: disabled with the price, or in the service's words when the page's balance is out of date", async function () {
    const license = card(CREDIT_ITEMS.license);
    await waitForText(license.getByTestId("redeem-blocker"), /^This costs 100,000 credits; you hold 500 credits\.$/);
    expect(await license.getByRole("button", { name: "Redeem", exact: true }).isDisabled()).to.equal(true);

    // The page's next reads of the account are held back while Stripe reports the purchase refunded in
    // full: the page still shows 500 credits, the ledger has none left (and 2,000 owed: already spent).
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const accountRoute = `${channel!.service.url}/credits/accounts/**`;
    await page.route(accountRoute, async (route) => {
      await held;
      await route.continue().catch(() => undefined);
    });
    const refund = await postWebhook(
      channel!.stack.webhookUrl,
      chargeRefunded({ payment: purchase, amountMinor: 2_500, refundedMinor: 2_500, currency: "usd" }),
      channel!.stack.webhookSecret,
    );
    expect(refund.status).to.equal(200);
    expect(await serviceAccount()).to.include({ balance: 0, owed: 2_000 });
    const game = card(CREDIT_ITEMS.gameItem);
    await game.getByLabel("Quantity").fill("1");
    expect(await balance().textContent()).to.equal("500 credits");
    const refused = await redeem(game);
    expect(refused).to.equal(`Not redeemed: Not enough credits: the item costs ${PRICES.gameItem}, the account holds 0`);
    release();
    await page.unroute(accountRoute);

    // Once the page reads the account again: nothing left, the debt explained, Redeem blocked by it.
    await waitForText(balance(), /^0 credits$/, 15_000);
    await waitForText(
      page.getByTestId("credit-owed"),
      /^You owe 2,000 credits\. A refund or a dispute of one of your payments took back credits you had already spent/,
    );
    const newest = page.getByTestId("movement").first();
    expect(await newest.getAttribute("data-kind")).to.equal("refund");
    expect(await newest.getByTestId("movement-amount").textContent()).to.equal("−2,500");
    await waitForText(game.getByTestId("redeem-blocker"), /^You owe 2,000 credits: buy credits to pay it first\.$/);
    expect((await serviceAccount()).vouchers).to.have.length(2);
    await screenshot(page, "credits-owed");
  });

  it("shows the movements and vouchers at phone width with no serious accessibility violation and no sideways scrolling", async function () {
    const phone = await openConnected(browser!, `${web!.url}/credits`, wallet, contexts, VIEWPORTS.phone);
    await eventually(
      () => phone.getByTestId("voucher").count(),
      (count) => count === 2,
    );
    await phone.getByTestId("movement").first().waitFor();
    expect(await seriousAccessibilityViolations(phone)).to.deep.equal([]);
    // A source string: the test runner's TypeScript loader may wrap functions in helpers the page lacks.
    const overflow = await phone.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(overflow).to.be.at.most(1);
    await screenshot(phone, "credits-vouchers-phone");
  });
});
