import { access, mkdir } from "node:fs/promises";
import path from "node:path";

import AxeBuilder from "@axe-core/playwright";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";

import type { RequiredService } from "../services.ts";
import type { TestWallet } from "./test-wallet.ts";

/** The Chromium the tests drive: Debian's package by default (Playwright cannot download browsers here). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** What `launchChromium` needs, for `requireService(this, CHROMIUM)` when it returns undefined. */
export const CHROMIUM: RequiredService = {
  name: "chromium",
  missing: `not installed at ${CHROMIUM_PATH}`,
  install: "apt-get install chromium, or set CHROMIUM_PATH",
};

/** Where screenshots go: kept after the run as test artifacts (git-ignored). */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, "..", "..", "..", "test-results", "web");

export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/**
 * Launches headless Chromium, or returns undefined when the binary is not installed: the caller then calls
 * `requireService(this, CHROMIUM)`, which fails the test under CI and skips it (saying why) elsewhere.
 */
export async function launchChromium(): Promise<Browser | undefined> {
  try {
    await access(CHROMIUM_PATH);
  } catch {
    return undefined;
  }
  // Root (as in CI containers) cannot use Chromium's sandbox.
  const args = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
}

/** Each page's "transaction failed: …" console lines (the app's whole error), for a failure to quote. */
const failedTransactions = new WeakMap<Page, string[]>();

/** Keeps `page`'s failed-transaction console lines from now on (the last 5). */
export function keepFailedTransactions(page: Page): void {
  const lines: string[] = [];
  failedTransactions.set(page, lines);
  page.on("console", (message) => {
    if (message.type() !== "error" || !message.text().startsWith("transaction failed: ")) return;
    lines.push(message.text());
    if (lines.length > 5) lines.shift();
  });
}

/**
 * Clicks the transaction button `name` inside `scope` and waits for that send's outcome. Returns the
 * status text; throws with it unless the transaction was mined (pass `expectFailure` to get a
 * failure's text instead).
 */
export async function sendTransaction(
  scope: Page | Locator,
  name: string,
  options: { expectFailure?: boolean; timeoutMs?: number; mayLeave?: boolean } = {},
): Promise<string> {
  const button = scope.getByRole("button", { name, exact: true });
  // A filter's inner locator is matched relative to the outer one, so it is built from the page.
  const page = "page" in scope ? scope.page() : scope;
  const tx = scope.locator(".tx").filter({ has: page.getByRole("button", { name, exact: true }) });
  const before = Number((await tx.getAttribute("data-attempts")) ?? "0");
  await button.click();
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    // Read without waiting: a button the page removes after its click is a failure to report, not to wait out.
    // With `mayLeave`, the page replaces the button once its transaction is mined (a row's next step, a
    // list without the row): the caller checks the effect on-chain.
    if ((await tx.count()) === 0) {
      if (options.mayLeave === true) return "left the page";
      throw new Error(`"${name}": its button left the page before showing an outcome`);
    }
    // Short reads: the button may leave the page between two of them (its row gone once mined).
    const quick = { timeout: 1_000 };
    const attempts = Number((await tx.getAttribute("data-attempts", quick).catch(() => null)) ?? "0");
    if (attempts > before) {
      const failure = tx.locator(".tx-status.error");
      const success = tx.locator(".tx-status.success");
      if ((await failure.count()) > 0) {
        const text = await failure.textContent(quick).catch(() => null);
        if (text !== null) {
          if (options.expectFailure === true) return text;
          // The page shows the short reason; the app logged the whole error, which says why.
          const logged = failedTransactions.get(page)?.at(-1);
          throw new Error(`"${name}" failed: ${text}${logged === undefined ? "" : `\n${logged}`}`);
        }
      }
      if ((await success.count()) > 0) {
        const text = await success.textContent(quick).catch(() => null);
        if (text !== null) {
          if (options.expectFailure === true) throw new Error(`"${name}" was expected to fail, but: ${text}`);
          return text;
        }
      }
    }
    if (Date.now() > deadline) throw new Error(`"${name}": no outcome within ${options.timeoutMs ?? 60_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until `locator`'s text matches `pattern`, and returns that text. */
export async function waitForText(locator: Locator, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    if ((await locator.count()) > 0) {
      last = (await locator.first().textContent()) ?? "";
      if (pattern.test(last)) return last;
    }
    if (Date.now() > deadline) throw new Error(`text ${pattern} not seen within ${timeoutMs} ms (last: "${last}")`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/**
 * Waits until the page's reads have landed: the app's `<main>` counts the queries under way
 * (`data-reads-in-flight`, TanStack Query's `useIsFetching`), and the count must stay at 0 for `quietMs`,
 * since a read that depends on another starts only once that one has answered.
 */
export async function readsSettled(page: Page, quietMs = 300, timeoutMs = 30_000): Promise<void> {
  // Read from here, not by page.waitForFunction: its predicate is evaluated inside the page, which the app's
  // Content-Security-Policy (no 'unsafe-eval') refuses.
  const main = page.locator("main");
  const deadline = Date.now() + timeoutMs;
  let quietSince: number | undefined;
  for (;;) {
    const now = Date.now();
    if ((await main.getAttribute("data-reads-in-flight")) !== "0") quietSince = undefined;
    else if (now - (quietSince ??= now) >= quietMs) return;
    if (now > deadline) throw new Error(`the page's reads did not settle within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The serious and critical accessibility violations axe finds on the page, one line each. */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes
          .map((node) => node.target.join(" "))
          .slice(0, 3)
          .join(", ")}`,
    );
}

/** Saves a full-page screenshot as `<name>.png` in the artifacts folder and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * After a failed test (`test`: mocha's current test), a screenshot of each page open in `contexts`, named
 * `failed-<prefix><the title's first words>-<n>`: what the user would have seen.
 */
export async function screenshotFailure(
  test: { state?: string; title: string } | undefined,
  contexts: BrowserContext[],
  prefix = "",
): Promise<void> {
  if (test?.state !== "failed") return;
  const title = test.title
    .split(/[^a-z0-9]+/i)
    .slice(0, 4)
    .join("-")
    .toLowerCase();
  let index = 0;
  for (const context of contexts)
    for (const page of context.pages()) await screenshot(page, `failed-${prefix}${title}-${index++}`).catch(() => undefined);
}

/**
 * Opens `url` in a new browser context of `browser` with `wallet` injected and connects it through the
 * page's Connect button. The context is added to `contexts`, for the caller to close after the test.
 */
export async function openConnected(
  browser: Browser,
  url: string,
  wallet: TestWallet,
  contexts: BrowserContext[],
  viewport: { width: number; height: number } = VIEWPORTS.desktop,
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  keepFailedTransactions(page);
  await wallet.install(page);
  await page.goto(url);
  await connectWallet(page);
  return page;
}

/** The header's wallet dialog (the list of the browser's wallets), open or not. */
export function walletDialog(page: Page): Locator {
  return page.getByRole("dialog", { name: "Connect a wallet" });
}

/**
 * Connects the page's wallet called `walletName` (the test wallet by default) as a visitor does, through the
 * header's **Connect wallet** button and the wallet's button in the dialog it opens, unless wagmi has
 * reconnected the wallet on its own (after a reload).
 */
export async function connectWallet(page: Page, walletName = "Test Wallet"): Promise<void> {
  const connected = page.getByTestId("connected-address");
  const button = page.getByRole("banner").getByRole("button", { name: "Connect wallet", exact: true });
  const choice = walletDialog(page).getByRole("button", { name: walletName, exact: true });
  // The header's working control, not the shell's early button: that one is replaced twice while the wallet half
  // loads (by the Suspense fallback's copy, then by the working one), and a click whose press and release straddle
  // a swap reaches neither. The page's body marks its reads once it has loaded, after the header's control.
  await page.locator("main[data-reads-in-flight]").waitFor({ state: "attached" });
  await connected.or(button).first().waitFor();
  if (await connected.isVisible()) return;
  await clickUnlessConnected(button, connected);
  await connected.or(choice).first().waitFor();
  if (await connected.isVisible()) return;
  await clickUnlessConnected(choice, connected);
  await connected.waitFor();
}

/**
 * Clicks `target`, unless `connected` shows first: wagmi's own reconnection can take the Connect button or the
 * dialog away while it is clicked (the dialog closes itself once connected). A click that fails otherwise fails.
 */
async function clickUnlessConnected(target: Locator, connected: Locator): Promise<void> {
  const click = target.click();
  const reconnected = connected.waitFor();
  // The one that loses is still running: its end, whatever it is, is of no interest.
  click.catch(() => undefined);
  reconnected.catch(() => undefined);
  await Promise.race([click, reconnected]);
}
