// `npm run audit:web`'s run, one step after another so that Lighthouse has the machine to itself: find the
// pages in the app's header, run axe on each in both colour schemes at two widths, close that browser, then
// run Lighthouse on each page.
import { chromium } from "playwright-core";

import { pageUrl, runAxe } from "./axe.ts";
import { checkChromium, sandboxFlags } from "./chromium.ts";
import { lighthousePage } from "./lighthouse.ts";
import { discoverPages, selectPages } from "./pages.ts";
import type { WebAuditReport } from "./report.ts";

export interface WebAuditOptions {
  /** The web app, without a trailing slash. */
  baseUrl: string;
  /** A subset of the header's pages; every one of them when undefined. */
  pages?: readonly string[];
  /** Lighthouse runs per page (the median by performance score is reported). */
  runs: number;
  chromiumPath: string;
  /** How long a page may take to load and render (default 30 s). */
  timeoutMs?: number;
  /** Progress, one line at a time. */
  log?: (line: string) => void;
}

/** Audits the web app at `options.baseUrl`; throws a WebAuditError when it cannot (no Chromium, no app, …). */
export async function runWebAudit(options: WebAuditOptions): Promise<WebAuditReport> {
  await checkChromium(options.chromiumPath);
  const browser = await chromium.launch({ executablePath: options.chromiumPath, headless: true, args: sandboxFlags() });
  let paths: string[];
  let axe: Awaited<ReturnType<typeof runAxe>>;
  try {
    const discovered = await discoverPages(browser, options.baseUrl, options.timeoutMs);
    options.log?.(`the header's pages: ${discovered.join(", ")}`);
    paths = selectPages(discovered, options.pages);
    axe = await runAxe(browser, options.baseUrl, paths, { timeoutMs: options.timeoutMs, log: options.log });
  } finally {
    await browser.close();
  }
  const pages: WebAuditReport["pages"] = [];
  for (const path of paths) {
    const url = pageUrl(options.baseUrl, path);
    pages.push({
      path,
      url,
      lighthouse: await lighthousePage(url, { chromiumPath: options.chromiumPath, runs: options.runs, log: options.log }),
    });
  }
  return {
    baseUrl: options.baseUrl,
    runs: options.runs,
    lighthouseVersion: pages[0].lighthouse.runs[0].lighthouseVersion,
    axeVersion: axe.axeVersion,
    pages,
    axe: axe.cells,
  };
}
