import { expect } from "chai";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { generatePrivateKey } from "viem/accounts";

import { appChains } from "../../../apps/web/src/config/chains.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
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

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    stack = stackOfTestDevnet(net);
    web = await serveWebApp(stack);
    const chains = [
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
  const connectButton = (on: Page) => on.getByRole("button", { name: "Connect wallet", exact: true });
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
  });
});
