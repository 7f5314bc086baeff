// The command line of `npm run audit:web`, parsed with node:util's parseArgs and checked before anything runs.
import { parseArgs } from "node:util";

import { WebAuditError } from "./errors.ts";

export const USAGE = [
  "usage: npm run audit:web -- [--url <base URL>] [--pages /a,/b] [--runs <N>] [--json <file>]",
  "  --url    the web app to audit (default: the running stack's, from .devnet/stack.json)",
  "  --pages  a comma-separated subset of the header's pages (default: every page the header links to)",
  "  --runs   Lighthouse runs per page, the median by performance score reported (default 1)",
  "  --json   also write the raw figures to this file",
].join("\n");

/** What was asked for. `pages` undefined: every page of the header. */
export interface AuditArguments {
  help: boolean;
  url?: string;
  pages?: string[];
  runs: number;
  json?: string;
}

/** `args` (without node and the script) as AuditArguments; throws a WebAuditError "USAGE" saying what is wrong. */
export function parseAuditArguments(args: readonly string[]): AuditArguments {
  let values: { help?: boolean; url?: string; pages?: string; runs?: string; json?: string };
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: "boolean", short: "h" },
        url: { type: "string" },
        pages: { type: "string" },
        runs: { type: "string" },
        json: { type: "string" },
      },
    }));
  } catch (error) {
    throw new WebAuditError("USAGE", (error as Error).message);
  }
  const parsed: AuditArguments = { help: values.help === true, runs: 1 };
  if (values.url !== undefined) parsed.url = baseUrlOf(values.url);
  if (values.pages !== undefined) parsed.pages = pagesOf(values.pages);
  if (values.runs !== undefined) {
    const runs = Number(values.runs);
    if (!/^\d+$/.test(values.runs.trim()) || !Number.isSafeInteger(runs) || runs < 1)
      throw new WebAuditError("USAGE", `--runs takes a whole number of at least 1, not "${values.runs}"`);
    parsed.runs = runs;
  }
  if (values.json !== undefined) {
    if (values.json.trim() === "") throw new WebAuditError("USAGE", "--json takes a file name");
    parsed.json = values.json;
  }
  return parsed;
}

/** An http(s) URL, as the base pages are resolved against (no trailing slash). */
export function baseUrlOf(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebAuditError("USAGE", `--url takes an http or https URL, such as http://127.0.0.1:8788, not "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new WebAuditError("USAGE", `--url takes an http or https URL, not "${text}"`);
  return url.href.replace(/\/+$/, "");
}

/** `/network,/stake` as paths, each starting with "/" and without a trailing slash. */
function pagesOf(text: string): string[] {
  const pages = text
    .split(",")
    .map((page) => page.trim())
    .filter((page) => page !== "");
  if (pages.length === 0) throw new WebAuditError("USAGE", "--pages takes one or more paths, such as /network,/stake");
  const wrong = pages.filter((page) => !page.startsWith("/"));
  if (wrong.length > 0)
    throw new WebAuditError("USAGE", `--pages takes paths starting with "/", such as /network: not ${wrong.join(", ")}`);
  return [...new Set(pages.map(normalPath))];
}

/** A page's path without a trailing slash (but "/" itself), so that /network/ and /network are one page. */
export function normalPath(page: string): string {
  return page.length > 1 ? page.replace(/\/+$/, "") || "/" : page;
}
