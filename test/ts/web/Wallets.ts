import { readFile } from "node:fs/promises";
import path from "node:path";

import { expect } from "chai";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { generatePrivateKey } from "viem/accounts";

import { appChains } from "../../../apps/web/src/config/chains.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import { webPaths } from "../../../src/web/web-build.ts";
import { webConfigFromStack } from "../../../src/web/web-config.ts";
import type { RunningWebServer } from "../../../src/web/web-server.ts";
import { eventually, sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { stackOfTestDevnet } from "../../helpers/stack.ts";
import {
  connectWallet,
  readsSettled,
  screenshot,
  screenshotFailure,
  seriousAccessibilityViolations,
  VIEWPORTS,
  waitForText,
  walletDialog,
} from "../../helpers/web/browser.ts";
import { TEST_WALLET_INFO, TestWallet, type WalletInfo } from "../../helpers/web/test-wallet.ts";
import { chromiumOrSkip, serveWebApp } from "../../helpers/web/web-app.ts";

/** A second wallet, announced after the test wallet: another name, uuid, reverse-DNS name and icon. */
const SECOND_WALLET: WalletInfo = {
  uuid: "0c6f4f8e-8a4b-4c1e-9f6e-2b0d3f5a7c91",
  name: "Second Wallet",
  rdns: "org.avn.secondwallet",
  icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Ccircle cx='8' cy='8' r='8' fill='%23166534'/%3E%3C/svg%3E",
};

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/** The narrowest phone the header is made for. */
const NARROW_PHONE = { width: 360, height: 740 };

/**
 * The wallet flow in a real Chromium on the shared devnet (issue 54): two wallets announced by EIP-6963, listed
 * in the connect dialog by name and icon, one connected; the account panel (copy, explorer link, network,
 * disconnect); the last used wallet listed first after a reload; a rejected connection said in the dialog; and a
 * browser without a wallet, which reads pages without any warning and gets the dialog's explanation. The wallets
 * hold fresh keys: nothing here is signed or sent.
 */
describe("web app: wallets (the connect dialog, the account panel) in Chromium", function () {
  this.timeout(300_000);
  let browser: Browser | undefined;
  let net: TestDevnet;
  let web: RunningWebServer;
  let stack: StackFile;
  const contexts: BrowserContext[] = [];
  // Carried from one test to the next: one visitor's browser with both wallets.
  let page: Page;
  let first: TestWallet;
  let second: TestWallet;
  let chains: ConstructorParameters<typeof TestWallet>[1];

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    stack = stackOfTestDevnet(net);
    web = await serveWebApp(stack);
    chains = [
      { chainId: net.devnet.l1.chainId, rpcUrl: net.devnet.l1.rpcUrl },
      { chainId: net.devnet.l2.chainId, rpcUrl: net.devnet.l2.rpcUrl },
    ];
    first = new TestWallet(generatePrivateKey(), chains, net.devnet.l2.chainId);
    // On the L1, where the account panel says it is not the app's L2.
    second = new TestWallet(generatePrivateKey(), chains, net.devnet.l1.chainId, SECOND_WALLET);
  });

  after(async function () {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
    await browser?.close();
    await web?.close();
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, contexts, "wallets-");
  });

  const chainsOfApp = () => appChains(webConfigFromStack(stack));
  /** The header's (pages that act offer one in place of each transaction's button). */
  const connectButton = (on: Page) => on.getByRole("banner").getByRole("button", { name: "Connect wallet", exact: true });
  const accountButton = (on: Page) => on.getByTestId("connected-address");
  const accountPanel = (on: Page) => on.getByTestId("account-menu");
  /** The wallets' names in the dialog, in the order listed. */
  const listedWallets = (on: Page) => walletDialog(on).locator(".wallet-option .wallet-name").allInnerTexts();
  /** A wallet's button in the dialog, found by its accessible name: the wallet's name, nothing else. */
  const walletButton = (on: Page, name: string) => walletDialog(on).getByRole("button", { name, exact: true });
  /** The text of the element that has the focus (its accessible name's source here). */
  const focused = (on: Page) => on.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''");
  const focusedTestId = (on: Page) => on.evaluate<string>("document.activeElement?.getAttribute('data-testid') ?? ''");
  const iconOf = (button: Locator) => button.locator("img").getAttribute("src");

  /**
   * Holds back the page's download of the app's wallet and chain half (interactive.tsx's chunk): `requested`
   * settles once the page has asked for it, to the function that lets it through.
   */
  const holdInteractive = async (on: Page): Promise<{ requested: Promise<() => Promise<void>> }> => {
    const chunk = /\/assets\/interactive-[^/]+\.js$/;
    let resolve: (release: () => Promise<void>) => void = () => undefined;
    const requested = new Promise<() => Promise<void>>((settle) => (resolve = settle));
    await on.route(chunk, (route) =>
      resolve(async () => {
        await route.continue();
        await on.unroute(chunk);
      }),
    );
    return { requested };
  };
  /** Each page's errors (uncaught, and logged by the app: React's for a panel that failed), for a failure to quote. */
  const pageErrors = new WeakMap<Page, string[]>();
  const newPage = async (viewport: { width: number; height: number }, wallets: TestWallet[]): Promise<Page> => {
    const context = await browser!.newContext({ viewport, permissions: ["clipboard-read", "clipboard-write"] });
    contexts.push(context);
    const opened = await context.newPage();
    const errors: string[] = [];
    pageErrors.set(opened, errors);
    opened.on("pageerror", (error) => errors.push(error.message));
    opened.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    for (const wallet of wallets) await wallet.install(opened);
    return opened;
  };
  /** Waits for `locator`; on a timeout, says what the page logged as errors. */
  const shows = async (on: Page, locator: Locator): Promise<void> => {
    await locator.waitFor().catch((error: Error) => {
      throw new Error(`${error.message}\npage errors: ${JSON.stringify(pageErrors.get(on) ?? [])}`);
    });
  };

  it("lists both announced wallets by name and icon in the dialog, and connects the one chosen", async function () {
    page = await newPage(VIEWPORTS.desktop, [first, second]);
    await page.goto(`${web.url}/network`);
    await connectButton(page).click();
    const dialog = walletDialog(page);
    await shows(page, dialog);
    await eventually(
      () => listedWallets(page),
      (names) => names.length === 2,
      10_000,
    );
    // No wallet used yet in this browser: the order they announced themselves in.
    expect(await listedWallets(page)).to.deep.equal([TEST_WALLET_INFO.name, SECOND_WALLET.name]);
    for (const info of [TEST_WALLET_INFO, SECOND_WALLET]) {
      const button = walletButton(page, info.name);
      expect(await iconOf(button), info.name).to.equal(info.icon);
      // Decorative (the button is named by the wallet's name), with its size set before it loads.
      const img = button.locator("img");
      expect([await img.getAttribute("alt"), await img.getAttribute("width"), await img.getAttribute("height")]).to.deep.equal([
        "",
        "28",
        "28",
      ]);
    }
    expect(
      await eventually(
        () => focused(page),
        (text) => text === TEST_WALLET_INFO.name,
        5_000,
      ),
    ).to.equal(TEST_WALLET_INFO.name);
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);
    await screenshot(page, "wallets-dialog-two-desktop");

    // Escape closes it, and the focus is back on the button that opened it.
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    await eventually(
      () => focused(page),
      (text) => text === "Connect wallet",
      5_000,
    );

    await connectButton(page).click();
    await walletButton(page, SECOND_WALLET.name).click();
    await accountButton(page).waitFor();
    await dialog.waitFor({ state: "detached" });
    expect(await accountButton(page).getAttribute("title")).to.equal(second.address);
    expect(await iconOf(accountButton(page))).to.equal(SECOND_WALLET.icon);
    expect(await accountButton(page).innerText()).to.contain(`${second.address.slice(0, 6)}…${second.address.slice(-4)}`);
    await eventually(
      () => focusedTestId(page),
      (id) => id === "connected-address",
      5_000,
    );
  });

  it("opens the account panel: the wallet's network and the switch to the L2, the address copied, the explorer link, Disconnect", async function () {
    const { l1, l2 } = chainsOfApp();
    await page.setViewportSize(VIEWPORTS.phone);
    await accountButton(page).click();
    const panel = accountPanel(page);
    await panel.waitFor();
    expect(await accountButton(page).getAttribute("aria-expanded")).to.equal("true");
    expect(await panel.getByTestId("account-address").innerText()).to.equal(second.address);
    await waitForText(
      panel.getByTestId("wallet-network"),
      new RegExp(`^Network: ${l1.name} \\(chain ${l1.id}\\), not this app's L2 \\(${l2.name}\\)\\.$`),
    );
    await screenshot(page, "wallets-account-panel-phone");
    expect(await seriousAccessibilityViolations(page)).to.deep.equal([]);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(overflow, "scrolls sideways").to.be.at.most(1);

    await panel.getByRole("button", { name: `Switch to ${l2.name}` }).click();
    await waitForText(panel.getByTestId("wallet-network"), new RegExp(`^Network: ${l2.name} \\(chain ${l2.id}\\)$`));
    expect(second.currentChainId).to.equal(l2.id);

    await panel.getByRole("button", { name: "Copy address", exact: true }).click();
    await waitForText(panel.getByRole("status"), /^Copied$/);
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).to.equal(second.address);

    expect(await panel.getByRole("link", { name: "View in the explorer" }).getAttribute("href")).to.equal(
      `/explorer/l2/address/${second.address}`,
    );

    // Escape closes it, the focus back on the account button.
    await page.keyboard.press("Escape");
    await panel.waitFor({ state: "detached" });
    expect(await accountButton(page).getAttribute("aria-expanded")).to.equal("false");
    await eventually(
      () => focusedTestId(page),
      (id) => id === "connected-address",
      5_000,
    );

    await accountButton(page).click();
    await accountPanel(page).getByRole("button", { name: "Disconnect", exact: true }).click();
    await connectButton(page).waitFor();
    expect(await accountButton(page).count()).to.equal(0);
    await eventually(
      () => focused(page),
      (text) => text === "Connect wallet",
      5_000,
    );
  });

  it("lists the last used wallet first after a reload, says a refused connection in the dialog, and reconnects by itself", async function () {
    await page.reload();
    await connectButton(page).click();
    await walletDialog(page).waitFor();
    await eventually(
      () => listedWallets(page),
      (names) => names.length === 2,
      10_000,
    );
    expect(await listedWallets(page)).to.deep.equal([SECOND_WALLET.name, TEST_WALLET_INFO.name]);
    expect(await walletButton(page, SECOND_WALLET.name).getAttribute("aria-describedby")).to.be.a("string");
    expect(await walletDialog(page).getByText("Last used").count()).to.equal(1);
    await screenshot(page, "wallets-dialog-last-used-phone");

    // A connection its user refuses: said in the dialog, which stays open for another try.
    first.rejectNextConnection();
    await walletButton(page, TEST_WALLET_INFO.name).click();
    expect(await waitForText(walletDialog(page).getByRole("alert"), /rejected/)).to.equal("You rejected the request in your wallet.");
    await walletButton(page, TEST_WALLET_INFO.name).click();
    await accountButton(page).waitFor();
    expect(await accountButton(page).getAttribute("title")).to.equal(first.address);

    // After a reload wagmi reconnects the wallet by itself (or the helper connects it, whichever comes first).
    await page.reload();
    await connectWallet(page);
    expect(await accountButton(page).getAttribute("title")).to.equal(first.address);

    // The page's body sees the reconnected wallet as the header does: on the L2, with no warning or line.
    await page.goto(`${web.url}/stake`);
    await accountButton(page).waitFor();
    await readsSettled(page);
    expect(await page.getByTestId("wrong-network").count(), "a wrong-network notice").to.equal(0);
    expect(await page.getByTestId("wallet-required").count(), "the connect line").to.equal(0);
    expect(await page.getByRole("button", { name: "Stake", exact: true }).count()).to.equal(1);
  });

  it("without a wallet: the header offers Connect wallet with no warning, read-only pages say nothing, acting pages say one line, and the dialog explains", async function () {
    const bare = await newPage(NARROW_PHONE, []);
    await bare.goto(`${web.url}/network`);
    await readsSettled(bare);
    const button = connectButton(bare);
    await button.waitFor();
    // In the header at 360 px, not behind the phone menu.
    const box = (await button.boundingBox())!;
    expect(box.x + box.width, "the button's right edge").to.be.at.most(NARROW_PHONE.width);
    expect(await bare.getByText(/No browser wallet found/).count()).to.equal(0);
    expect(await bare.getByTestId("wallet-required").count()).to.equal(0);
    expect(await bare.locator("main").innerText()).not.to.match(/connect a wallet/i);
    await screenshot(bare, "wallets-none-network-360");

    await button.click();
    const dialog = walletDialog(bare);
    const explanation = dialog.getByTestId("no-wallet");
    await shows(bare, explanation);
    expect(await explanation.innerText()).to.match(/^A wallet keeps your keys and signs what you do here/);
    expect(await explanation.getByRole("link", { name: "metamask.io" }).getAttribute("href")).to.equal("https://metamask.io/download/");
    expect(await dialog.getByRole("listitem").count()).to.equal(0);
    const overflow = await bare.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(overflow, "scrolls sideways").to.be.at.most(1);
    expect(await seriousAccessibilityViolations(bare)).to.deep.equal([]);
    await screenshot(bare, "wallets-none-dialog-360");
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    await eventually(
      () => focused(bare),
      (text) => text === "Connect wallet",
      5_000,
    );

    // A page that acts: the one line, above its forms, and no section's own "Connect a wallet to see …".
    await bare.goto(`${web.url}/stake`);
    const line = bare.getByTestId("wallet-required");
    expect(await waitForText(line, /wallet/)).to.equal("Connect a wallet to stake primary tokens and to redeem them.");
    expect(await bare.getByTestId("wallet-required").count()).to.equal(1);
    expect(await bare.locator("main").innerText()).not.to.match(/connect a wallet to see/i);
    await screenshot(bare, "wallets-none-stake-360");
    // Each form's action is a Connect button instead, which opens the same list as the header's.
    const stakeForm = bare.getByRole("region", { name: "Stake primary tokens" });
    expect(await stakeForm.getByRole("button", { name: "Stake", exact: true }).count()).to.equal(0);
    await stakeForm.getByRole("button", { name: "Connect wallet", exact: true }).click();
    await shows(bare, walletDialog(bare).getByTestId("no-wallet"));
  });

  it("paints the header, the page's heading and introduction before the wallet code loads; a click on Connect then opens the list", async function () {
    // What the first paint downloads: the entry and its static imports. None of it is wallet or chain code.
    const { distDir } = webPaths(projectRoot);
    const manifest = JSON.parse(await readFile(path.join(distDir, ".vite", "manifest.json"), "utf8")) as Record<
      string,
      { file: string; imports?: string[]; isEntry?: boolean }
    >;
    const firstPaint = new Set<string>();
    const visit = (key: string) => {
      const chunk = manifest[key];
      if (chunk === undefined || firstPaint.has(chunk.file)) return;
      firstPaint.add(chunk.file);
      for (const imported of chunk.imports ?? []) visit(imported);
    };
    for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry === true) visit(key);
    const sources: string[] = [];
    for (const file of firstPaint) {
      // Rolldown's runtime (a few hundred bytes of its own) comes without a source map.
      const map = await readFile(path.join(distDir, `${file}.map`), "utf8").catch(() => undefined);
      sources.push(...(map === undefined ? [file] : (JSON.parse(map) as { sources: string[] }).sources));
    }
    expect(
      sources.some((source) => source.includes("/react-dom/")),
      "React is in the first paint's chunks",
    ).to.equal(true);
    const walletCode = /node_modules\/(wagmi|@wagmi|viem|ox|@tanstack|zod|@noble)\/|\/generated\/abis\.ts$/;
    expect(sources.filter((source) => walletCode.test(source))).to.deep.equal([]);

    // The wallet and chain half held back: the shell is on screen all the same, its Connect button works.
    // A wallet never connected here: none reconnects by itself.
    const visitor = await newPage(NARROW_PHONE, [new TestWallet(generatePrivateKey(), chains, net.devnet.l2.chainId)]);
    const { requested } = await holdInteractive(visitor);
    await visitor.goto(`${web.url}/stake`);
    const releaseInteractive = await requested;
    await visitor.getByRole("heading", { level: 1, name: "Stake" }).waitFor();
    expect(await visitor.locator("main .intro").innerText()).to.match(/^Staked tokens are backed 1:1 by primary tokens/);
    expect(await visitor.title()).to.equal("Stake · Asset Verification Network");
    expect(await visitor.locator("main").getAttribute("data-reads-in-flight"), "no page body yet").to.equal(null);
    // The pages' menu works: at 360 px behind its button.
    await visitor.getByRole("button", { name: "Menu" }).click();
    await visitor.getByRole("link", { name: "Network" }).waitFor();
    await visitor.getByRole("button", { name: "Menu" }).click();
    await connectButton(visitor).click();
    expect(await walletDialog(visitor).count(), "no dialog before its code").to.equal(0);

    await releaseInteractive();
    // The click is carried out by the working button: the list opens, the focus on its first wallet.
    await shows(visitor, walletDialog(visitor));
    await eventually(
      () => focused(visitor),
      (text) => text === TEST_WALLET_INFO.name,
      10_000,
    );
    await readsSettled(visitor);
    expect(await visitor.getByTestId("wallet-required").innerText()).to.equal(
      "Connect a wallet to stake primary tokens and to redeem them.",
    );

    // A wallet that this site may use reconnects by itself once the code has come, seen alike by the header
    // and by the page's body: the account's button, and no notice that the wallet is elsewhere.
    const returning = await newPage(NARROW_PHONE, [first]);
    const held = await holdInteractive(returning);
    await returning.goto(`${web.url}/stake`);
    await (
      await held.requested
    )();
    await accountButton(returning).waitFor();
    await readsSettled(returning);
    expect(await returning.getByTestId("wrong-network").count(), "a wrong-network notice").to.equal(0);
    expect(await returning.getByTestId("wallet-required").count(), "the connect line").to.equal(0);
  });
});
