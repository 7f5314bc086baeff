// axe on every page in both colour schemes at a phone's width and a desktop's, once the page has rendered
// its content: its heading is visible and the app's reads have ended (`<main id="main">` carries TanStack
// Query's fetching count as `data-reads-in-flight`). Waits are Playwright's, on the DOM: no fixed delays.
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";

import { WebAuditError } from "./errors.ts";
import { firstLine } from "./pages.ts";

export const COLOR_SCHEMES = ["light", "dark"] as const;
export type ColorScheme = (typeof COLOR_SCHEMES)[number];
/** A small phone's width and a desktop's, in CSS pixels. */
export const WIDTHS = [360, 1280] as const;
/** The window's height at every width. */
export const HEIGHT = 800;

/** One rule axe found broken on one page in one scheme at one width. */
export interface AxeViolation {
  id: string;
  /** axe's "minor" | "moderate" | "serious" | "critical", or null when it gives none. */
  impact: string | null;
  help: string;
  helpUrl: string;
  /** How many elements break it. */
  nodes: number;
  /** The elements, as axe's CSS selectors. */
  targets: string[];
}

/** One page × colour scheme × width. */
export interface AxeCell {
  page: string;
  scheme: ColorScheme;
  width: number;
  violations: AxeViolation[];
}

export interface AxeRun {
  /** The axe-core version that ran. */
  axeVersion: string;
  cells: AxeCell[];
}

/**
 * Runs axe (its default rules) on each of `pages` (paths below `baseUrl`) in each colour scheme at each width, one
 * browser context per scheme and width. Throws a WebAuditError "PAGE_NOT_RENDERED" when a page does not render
 * within `timeoutMs`.
 */
export async function runAxe(
  browser: Browser,
  baseUrl: string,
  pages: readonly string[],
  options: { timeoutMs?: number; log?: (line: string) => void } = {},
): Promise<AxeRun> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const cells: AxeCell[] = [];
  let axeVersion = "";
  for (const scheme of COLOR_SCHEMES) {
    for (const width of WIDTHS) {
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width, height: HEIGHT } });
      try {
        for (const path of pages) {
          options.log?.(`axe: ${path}, ${scheme}, ${width} px`);
          const page = await context.newPage();
          try {
            await openRendered(page, pageUrl(baseUrl, path), timeoutMs, `${path} (${scheme}, ${width} px)`);
            const results = await new AxeBuilder({ page }).analyze();
            axeVersion = results.testEngine.version;
            cells.push({
              page: path,
              scheme,
              width,
              violations: results.violations.map((violation) => ({
                id: violation.id,
                impact: violation.impact ?? null,
                help: violation.help,
                helpUrl: violation.helpUrl,
                nodes: violation.nodes.length,
                targets: violation.nodes.map((node) => node.target.map(String).join(" ")),
              })),
            });
          } finally {
            await page.close();
          }
        }
      } finally {
        await context.close();
      }
    }
  }
  // Page by page, as the report reads: each page's schemes and widths together.
  cells.sort((a, b) => pages.indexOf(a.page) - pages.indexOf(b.page));
  return { axeVersion, cells };
}

/** The URL of the page at `path` of the app at `baseUrl`. */
export function pageUrl(baseUrl: string, path: string): string {
  return new URL(path, `${baseUrl}/`).href;
}

/**
 * Opens `url` and waits until the page has rendered its content: a heading in `<main>` visible, then
 * `<main id="main">`'s reads in flight at 0 (the count the app keeps from TanStack Query's `useIsFetching`).
 * Both are Playwright locator waits, which the app's Content-Security-Policy allows (a `waitForFunction`
 * predicate would be evaluated in the page, which its policy refuses).
 */
export async function openRendered(page: Page, url: string, timeoutMs: number, name = url): Promise<void> {
  try {
    await page.goto(url, { timeout: timeoutMs });
  } catch (error) {
    throw new WebAuditError("APP_UNREACHABLE", `${name} did not load: ${firstLine(error)}`, { cause: error });
  }
  const waits: Array<[string, () => Promise<void>]> = [
    ["its heading (main h1) visible", () => page.locator("main h1").first().waitFor({ state: "visible", timeout: timeoutMs })],
    [
      'its reads ended (main#main[data-reads-in-flight="0"])',
      () => page.locator('main#main[data-reads-in-flight="0"]').waitFor({ state: "attached", timeout: timeoutMs }),
    ],
  ];
  for (const [what, wait] of waits) {
    try {
      await wait();
    } catch (error) {
      throw new WebAuditError("PAGE_NOT_RENDERED", `${name}: not rendered within ${timeoutMs} ms, waiting for ${what}`, { cause: error });
    }
  }
}
