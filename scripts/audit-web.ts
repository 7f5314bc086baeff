// `npm run audit:web -- [--url <base URL>] [--pages /a,/b] [--runs N] [--json <file>]`: Lighthouse (mobile preset,
// simulated throttling) and axe (light and dark, 360 and 1280 px) on every page the web app's header links to, against
// a running stack (`npm start`) or the app at --url (src/tooling/web-audit/). Prints a Markdown table of each, then
// each unmet bar. Exits 0 when every bar is met, 1 when one is not, 2 when it could not audit (a wrong argument, no
// stack, no Chromium, the app not answering). Progress goes to stderr, the tables to stdout.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

import { AvnError } from "@avn/protocol/errors";

import { stackFilePath } from "../src/common/stack-file.ts";
import { parseAuditArguments, USAGE } from "../src/tooling/web-audit/arguments.ts";
import { runWebAudit } from "../src/tooling/web-audit/audit.ts";
import { DEFAULT_CHROMIUM_PATH } from "../src/tooling/web-audit/chromium.ts";
import { BARS, formatReport, unmetBars } from "../src/tooling/web-audit/report.ts";
import { resolveBaseUrl } from "../src/tooling/web-audit/target.ts";

const root = path.resolve(import.meta.dirname, "..");

async function main(): Promise<number> {
  let args;
  try {
    args = parseAuditArguments(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    const baseUrl = await resolveBaseUrl(args.url, stackFilePath(root));
    const report = await runWebAudit({
      baseUrl,
      pages: args.pages,
      runs: args.runs,
      chromiumPath: process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH,
      log: (line) => console.error(line),
    });
    const unmet = unmetBars(report);
    console.log(formatReport(report));
    if (args.json !== undefined) {
      // npm runs scripts in the project's root: a relative name is the caller's, from where npm was started.
      const file = path.resolve(process.env.INIT_CWD ?? process.cwd(), args.json);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify({ ...report, bars: BARS, unmet, passed: unmet.length === 0 }, null, 2)}\n`);
      console.error(`raw figures written to ${file}`);
    }
    return unmet.length === 0 ? 0 : 1;
  } catch (error) {
    console.error(
      error instanceof AvnError
        ? `error [${error.code}]: ${error.message}`
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error),
    );
    return 2;
  }
}

// Exits rather than waits for the event loop to empty: a browser's or Lighthouse's leftover handle must not keep it open.
process.exit(await main());
