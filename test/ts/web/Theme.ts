import { expect } from "chai";
import { getAddress, NonceManager, parseEther, toQuantity, Wallet, type JsonRpcProvider } from "ethers";
import type { Browser, BrowserContext, Page } from "playwright-core";

import { bridgePrimaryTokens } from "../../../src/devnet/network-setup.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import type { RunningWebServer } from "../../../src/web/web-server.ts";
import { NodeLicense__factory, NodeRegistry__factory, PrimaryToken__factory } from "../../../typechain-types/index.ts";
import { sharedTestDevnet, type TestDevnet } from "../../helpers/devnet.ts";
import { stackOfTestDevnet } from "../../helpers/stack.ts";
import {
  readsSettled,
  screenshot,
  screenshotFailure,
  seriousAccessibilityViolations,
  VIEWPORTS,
  waitForText,
} from "../../helpers/web/browser.ts";
import { chromiumOrSkip, serveWebApp } from "../../helpers/web/web-app.ts";

/** The narrowest phone the header is made for. */
const NARROW = { width: 360, height: 740 } as const;
/** The header's page links, in their order. */
const PAGE_LINKS = ["Delegate", "Bridge", "Stake", "Licenses", "Network", "Governance", "Credits", "Explorer"];

/** The relative luminance (WCAG) of a computed colour, `rgb(r, g, b)` or `rgba(r, g, b, a)`. */
function luminance(color: string): number {
  const channels = /^rgba?\((\d+), (\d+), (\d+)/.exec(color);
  if (channels === null) throw new Error(`not an rgb() colour: ${color}`);
  const [r, g, b] = channels.slice(1, 4).map((value) => {
    const c = Number(value) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The page's background (the root's, which paints the canvas) and text colours, and its `color-scheme`. */
async function pageColours(page: Page): Promise<{ background: number; text: number; scheme: string; contrast: number }> {
  const [background, text, scheme] = await page.evaluate<[string, string, string]>(
    "[getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.body).color, getComputedStyle(document.documentElement).colorScheme]",
  );
  const [b, t] = [luminance(background), luminance(text)];
  return { background: b, text: t, scheme, contrast: (Math.max(b, t) + 0.05) / (Math.min(b, t) + 0.05) };
}

/**
 * The app's identity and theme in a real Chromium on the shared devnet, as a visitor (no wallet connected):
 * light and dark themes that follow the system and the header's switch, which overrides it across reloads
 * and is applied by index.html's inline script before the app runs; both themes without a serious axe
 * violation at phone and desktop width; the header on one row at 360 px with its menu; an operator's address
 * in the Network page's nodes table on one line, shortened, copied whole by its copy button. The operator is
 * the test's own: a fresh account buys a license (primary tokens bridged to it) and delegates it to a fresh
 * address, so that the table has a row whatever ran before.
 */
describe("web app: theme, header and addresses in Chromium", function () {
  this.timeout(300_000);
  let browser: Browser | undefined;
  let net: TestDevnet;
  let web: RunningWebServer;
  let l1: JsonRpcProvider;
  let l2: JsonRpcProvider;
  const contexts: BrowserContext[] = [];
  const owner = Wallet.createRandom();
  const operator = getAddress(Wallet.createRandom().address);

  before(async function () {
    browser = await chromiumOrSkip(this);
    net = await sharedTestDevnet();
    const stack = stackOfTestDevnet(net);
    web = await serveWebApp(stack);
    l1 = devnetProvider(net.devnet.l1.rpcUrl, net.devnet.l1.chainId);
    l2 = devnetProvider(net.devnet.l2.rpcUrl, net.devnet.l2.chainId);

    // A license of the test's own, delegated to `operator`: one row of the Network page's nodes table.
    const l2Contracts = stack.contracts!.l2!;
    const license = NodeLicense__factory.connect(l2Contracts.NodeLicense, l2);
    const price = await license.quote(1n);
    await bridgePrimaryTokens(
      {
        l1,
        l2,
        deployer: net.devnet.accounts.deployer,
        contracts: {
          l1PrimaryToken: net.deployment!.l1PrimaryToken,
          l1StandardBridge: net.devnet.l1Contracts.L1StandardBridge,
          l2: { PrimaryToken: l2Contracts.PrimaryToken },
        },
      },
      [{ to: owner.address, amount: price }],
    );
    await l2.send("anvil_setBalance", [owner.address, toQuantity(parseEther("1"))]);
    const signer = new NonceManager(owner.connect(l2));
    await (await PrimaryToken__factory.connect(l2Contracts.PrimaryToken, signer).approve(l2Contracts.NodeLicense, price)).wait();
    await (await license.connect(signer).buy(1n, price)).wait();
    const licenseId = await license.tokenOfOwnerByIndex(owner.address, 0n);
    await (await NodeRegistry__factory.connect(l2Contracts.NodeRegistry, signer).delegate([licenseId], operator)).wait();
  });

  after(async function () {
    await browser?.close();
    await web?.close();
    l1?.destroy();
    l2?.destroy();
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, contexts, "theme-");
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
  });

  const open = async (
    route: string,
    options: { colorScheme: "light" | "dark"; viewport?: { width: number; height: number }; clipboard?: boolean },
  ): Promise<Page> => {
    const context = await browser!.newContext({
      colorScheme: options.colorScheme,
      viewport: options.viewport ?? VIEWPORTS.desktop,
      permissions: options.clipboard === true ? ["clipboard-read", "clipboard-write"] : [],
    });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${web.url}${route}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    return page;
  };

  /** The switch's `value` chosen, once the page has applied it to <html>. */
  const choose = async (page: Page, value: "System" | "Light" | "Dark") => {
    await page.getByRole("radio", { name: value, exact: true }).check();
    await page
      .locator(value === "System" ? "html:not([data-theme])" : `html[data-theme="${value.toLowerCase()}"]`)
      .waitFor({ state: "attached" });
  };

  /**
   * A dark page: dark background, light text, enough contrast, and `color-scheme` (which form controls and
   * scrollbars follow) "dark" when chosen, "light dark" when following the system.
   */
  const expectDark = async (page: Page, when: string, scheme: "dark" | "light dark") => {
    const colours = await pageColours(page);
    expect(colours.background, `${when}: background luminance`).to.be.below(0.02);
    expect(colours.text, `${when}: text luminance`).to.be.above(0.7);
    expect(colours.scheme, `${when}: color-scheme`).to.equal(scheme);
    expect(colours.contrast, `${when}: contrast`).to.be.at.least(4.5);
  };
  const expectLight = async (page: Page, when: string, scheme: "light" | "light dark") => {
    const colours = await pageColours(page);
    expect(colours.background, `${when}: background luminance`).to.be.above(0.9);
    expect(colours.text, `${when}: text luminance`).to.be.below(0.02);
    expect(colours.scheme, `${when}: color-scheme`).to.equal(scheme);
    expect(colours.contrast, `${when}: contrast`).to.be.at.least(4.5);
  };

  it("follows the system's preference, and the switch overrides it across a reload, applied before the app runs", async function () {
    // A dark system: a dark page; Light overrides it, and holds after a reload.
    const dark = await open("/network", { colorScheme: "dark" });
    await expectDark(dark, "dark system", "light dark");
    expect(await dark.getByRole("radio", { name: "System", exact: true }).isChecked()).to.equal(true);
    await choose(dark, "Light");
    await expectLight(dark, "dark system, Light chosen", "light");
    await dark.reload();
    await dark.getByRole("heading", { level: 1 }).waitFor();
    await expectLight(dark, "dark system, Light chosen, reloaded", "light");
    expect(await dark.getByRole("radio", { name: "Light", exact: true }).isChecked()).to.equal(true);
    // System again: the system's dark, also after a reload (nothing stored).
    await choose(dark, "System");
    await expectDark(dark, "System chosen again", "light dark");
    await dark.reload();
    await dark.getByRole("heading", { level: 1 }).waitFor();
    await expectDark(dark, "System chosen again, reloaded", "light dark");

    // A light system: a light page; Dark overrides it.
    const light = await open("/network", { colorScheme: "light" });
    await expectLight(light, "light system", "light dark");
    await choose(light, "Dark");
    await expectDark(light, "light system, Dark chosen", "dark");
    // The stored choice is applied by index.html's script, before and without the app: with the app's scripts
    // refused, the page that loads is dark (the server's CSP lets that inline script run, and only it).
    await light.route("**/assets/*.js", (route) => route.abort());
    await light.reload();
    await light.locator('html[data-theme="dark"]').waitFor({ state: "attached" });
    expect(await light.getByRole("heading", { level: 1 }).count()).to.equal(0);
    await expectDark(light, "light system, Dark stored, without the app", "dark");
  });

  it("has no serious accessibility violation in either theme at phone and desktop width", async function () {
    const problems: string[] = [];
    for (const colorScheme of ["light", "dark"] as const)
      for (const [width, viewport] of [
        ["desktop", VIEWPORTS.desktop],
        ["phone", NARROW],
      ] as const) {
        const page = await open("/network", { colorScheme, viewport });
        await page.locator(`[data-testid="node-row"][data-operator="${operator}"]`).waitFor();
        await readsSettled(page);
        await screenshot(page, `theme-network-${colorScheme}-${width}`);
        for (const violation of await seriousAccessibilityViolations(page)) problems.push(`${colorScheme} at ${width} width: ${violation}`);
        const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
        if (overflow > 1) problems.push(`${colorScheme} at ${width} width scrolls sideways by ${overflow} px`);
        await page.context().close();
      }
    expect(problems).to.deep.equal([]);
  });

  it("keeps the header on one row at 360 px, the pages behind a menu and Connect in sight", async function () {
    const page = await open("/network", { colorScheme: "dark", viewport: NARROW });
    // The header as it stays: once the wallet half has loaded (the page's body with it), the shell's early Connect
    // button has given way to the working one. Measured during that swap, the button just found could be gone.
    await readsSettled(page);
    const header = page.getByRole("banner");
    const menuButton = header.getByRole("button", { name: "Menu", exact: true });
    const connect = header.getByRole("button", { name: /^Connect/ });
    const nav = page.getByRole("navigation", { name: "Pages", includeHidden: true });

    // One row: the brand, Connect and the menu button side by side, the header as high as one control and its padding.
    const headerBox = (await header.boundingBox())!;
    expect(headerBox.height, "header height").to.be.below(72);
    for (const [name, item] of [
      ["brand", header.locator(".brand")],
      ["Connect", connect],
      ["menu button", menuButton],
    ] as const) {
      const box = await item.boundingBox();
      if (box === null) throw new Error(`${name} is not shown`);
      expect(Math.abs(box.y + box.height / 2 - (headerBox.y + headerBox.height / 2)), `${name} off the row`).to.be.below(8);
      expect(box.x + box.width, `${name} beyond the right edge`).to.be.at.most(NARROW.width);
    }
    // Connect is in the header itself, not in the menu.
    expect(
      await page
        .locator("#site-menu")
        .getByRole("button", { name: /^Connect/ })
        .count(),
    ).to.equal(0);

    // No page link shown until the menu opens; then every one, until Escape closes it (the focus back on its button).
    const links = nav.getByRole("link", { includeHidden: true });
    expect(await links.count()).to.equal(PAGE_LINKS.length);
    for (const link of await links.all()) expect(await link.isVisible(), (await link.textContent()) ?? "").to.equal(false);
    expect(await menuButton.getAttribute("aria-expanded")).to.equal("false");
    expect(await menuButton.getAttribute("aria-controls")).to.equal("site-menu");
    await menuButton.click();
    await header.getByRole("button", { name: "Menu", expanded: true }).waitFor();
    expect(await nav.getByRole("link").allTextContents()).to.deep.equal(PAGE_LINKS);
    for (const link of await links.all()) expect(await link.isVisible(), (await link.textContent()) ?? "").to.equal(true);
    expect(await page.getByRole("radio", { name: "Dark", exact: true }).isVisible()).to.equal(true);
    await screenshot(page, "theme-menu-open-phone");
    await page.keyboard.press("Escape");
    await header.getByRole("button", { name: "Menu", expanded: false }).waitFor();
    for (const link of await links.all()) expect(await link.isVisible(), (await link.textContent()) ?? "").to.equal(false);
    expect(await page.evaluate<string | null>("document.activeElement && document.activeElement.getAttribute('aria-controls')")).to.equal(
      "site-menu",
    );

    // A link in the menu navigates and closes it.
    await menuButton.click();
    await nav.getByRole("link", { name: "Explorer", exact: true }).click();
    await page.waitForURL("**/explorer");
    await header.getByRole("button", { name: "Menu", expanded: false }).waitFor();
    expect(await nav.getByRole("link", { name: "Explorer", exact: true }).isVisible()).to.equal(false);
    expect((await header.boundingBox())!.height, "header height on the explorer").to.be.below(72);
  });

  it("shows an operator's address in the nodes table on one line, shortened, and copies it whole", async function () {
    const page = await open("/network", { colorScheme: "light", viewport: NARROW, clipboard: true });
    const row = page.locator(`[data-testid="node-row"][data-operator="${operator}"]`);
    await row.waitFor({ timeout: 30_000 });
    const cell = row.getByRole("cell").first();
    // The full address for screen readers (the link's name) and on hover (its title); to the eye `0x1234…abcd`.
    const link = cell.getByRole("link", { name: operator, exact: true });
    expect(await link.getAttribute("title")).to.equal(operator);
    const hex = cell.locator(".hex");
    const selector = `[data-operator="${operator}"] .hex`;
    expect(await page.evaluate<number>(`document.querySelector('${selector}').getClientRects().length`), "lines").to.equal(1);
    expect(await page.evaluate<number>(`document.querySelector('${selector} a').getClientRects().length`), "link's lines").to.equal(1);
    const before = (await hex.boundingBox())!;
    // Shortened: the full 42 characters in the table's monospace would be about 350 px wide.
    expect(before.width, "width of the address and its button").to.be.below(180);

    // Its copy button copies the whole address, says so, and moves nothing.
    await cell.getByRole("button", { name: "Copy address", exact: true }).click();
    await waitForText(cell.getByRole("status"), /^Copied$/);
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).to.equal(operator);
    expect(await hex.boundingBox()).to.deep.equal(before);
    await screenshot(page, "theme-address-copied-phone");
  });
});
