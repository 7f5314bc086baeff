// Which pages the audit covers, found in the running app itself: the links of its header's page navigation
// (`nav[aria-label="Pages"]`), read at desktop width where the header shows them all. A page added to the
// header is audited without anyone remembering to list it.
import type { Browser } from "playwright-core";

import { normalPath } from "./arguments.ts";
import { WebAuditError } from "./errors.ts";

/** The header's page links, as the app marks them. */
export const PAGE_LINKS = 'nav[aria-label="Pages"] a';

/** The window pages are discovered in: desktop width, where the header lists every page. */
export const DISCOVERY_VIEWPORT = { width: 1280, height: 800 } as const;

/**
 * Opens `baseUrl` in `browser` and returns the paths of the header's same-origin page links, in the header's
 * order, each once. Throws a WebAuditError "APP_UNREACHABLE" when the app does not answer or shows no such links
 * within `timeoutMs`.
 */
export async function discoverPages(browser: Browser, baseUrl: string, timeoutMs = 30_000): Promise<string[]> {
  const context = await browser.newContext({ viewport: DISCOVERY_VIEWPORT });
  try {
    const page = await context.newPage();
    try {
      await page.goto(baseUrl, { timeout: timeoutMs });
    } catch (error) {
      throw new WebAuditError("APP_UNREACHABLE", `The web app at ${baseUrl} does not answer (is the stack running?): ${firstLine(error)}`, {
        cause: error,
      });
    }
    const links = page.locator(PAGE_LINKS);
    try {
      await links.first().waitFor({ state: "attached", timeout: timeoutMs });
    } catch (error) {
      throw new WebAuditError("APP_UNREACHABLE", `${page.url()} shows no page links (${PAGE_LINKS}) within ${timeoutMs} ms`, {
        cause: error,
      });
    }
    const hrefs = await Promise.all((await links.all()).map((link) => link.getAttribute("href")));
    return sameOriginPaths(hrefs, page.url());
  } finally {
    await context.close();
  }
}

/** The paths (with their query) of `hrefs` resolved against `pageUrl` that share its origin, each once, in order. */
export function sameOriginPaths(hrefs: ReadonlyArray<string | null>, pageUrl: string): string[] {
  const origin = new URL(pageUrl).origin;
  const paths: string[] = [];
  for (const href of hrefs) {
    if (href === null || href.trim() === "") continue;
    let url: URL;
    try {
      url = new URL(href, pageUrl);
    } catch {
      continue;
    }
    if (url.origin !== origin) continue;
    const page = normalPath(url.pathname) + url.search;
    if (!paths.includes(page)) paths.push(page);
  }
  return paths;
}

/**
 * The pages to audit: every discovered one, or those `requested` (in the order asked), each of which must be
 * among the discovered ones (a typo would otherwise audit the app's "Page not found").
 */
export function selectPages(discovered: readonly string[], requested: readonly string[] | undefined): string[] {
  if (discovered.length === 0) throw new WebAuditError("APP_UNREACHABLE", "The header links to no page of the app's own origin.");
  if (requested === undefined) return [...discovered];
  const unknown = requested.filter((page) => !discovered.includes(page));
  if (unknown.length > 0)
    throw new WebAuditError(
      "UNKNOWN_PAGE",
      `${unknown.join(", ")} ${unknown.length === 1 ? "is" : "are"} not among the header's pages: ${discovered.join(", ")}`,
    );
  return [...requested];
}

/** The first line of an error's message (Playwright's carry a call log below it). */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0];
}
