import { spawn } from "node:child_process";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { parseAuditArguments } from "../../../src/tooling/web-audit/arguments.ts";
import type { AxeCell } from "../../../src/tooling/web-audit/axe.ts";
import { checkChromium } from "../../../src/tooling/web-audit/chromium.ts";
import { WebAuditError } from "../../../src/tooling/web-audit/errors.ts";
import { medianRun, type LighthouseFigures } from "../../../src/tooling/web-audit/lighthouse.ts";
import { sameOriginPaths, selectPages } from "../../../src/tooling/web-audit/pages.ts";
import { axeTable, formatReport, lighthouseTable, unmetBars, type WebAuditReport } from "../../../src/tooling/web-audit/report.ts";
import { resolveBaseUrl } from "../../../src/tooling/web-audit/target.ts";
import { CHROMIUM, CHROMIUM_PATH } from "../../helpers/web/browser.ts";
import { requireService } from "../../helpers/services.ts";

const root = path.resolve(import.meta.dirname, "..", "..", "..");

/** The code of the WebAuditError `run` throws (fails when it throws none, or another error). */
async function codeOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).to.be.instanceOf(WebAuditError);
    return `${(error as WebAuditError).code}: ${(error as Error).message}`;
  }
  expect.fail("expected a WebAuditError");
}

/** A run's figures: every bar met unless overridden. */
function figures(overrides: Partial<LighthouseFigures> = {}): LighthouseFigures {
  return {
    performance: 0.97,
    accessibility: 1,
    bestPractices: 0.96,
    lcpMs: 1_840,
    tbtMs: 12.4,
    fcpMs: 900,
    cls: 0,
    shortfalls: [],
    warnings: [],
    lighthouseVersion: "12.8.2",
    benchmarkIndex: 1500,
    formFactor: "mobile",
    throttlingMethod: "simulate",
    ...overrides,
  };
}

function cell(page: string, scheme: "light" | "dark", width: number, violations: AxeCell["violations"] = []): AxeCell {
  return { page, scheme, width, violations };
}

const imageAlt = {
  id: "image-alt",
  impact: "critical",
  help: "Images must have alternative text",
  helpUrl: "",
  nodes: 1,
  targets: ["img"],
};

describe("npm run audit:web (src/tooling/web-audit)", function () {
  describe("its command line", function () {
    it("takes --url, --pages, --runs and --json, with one run and every page by default", function () {
      expect(parseAuditArguments([])).to.deep.equal({ help: false, runs: 1 });
      expect(
        parseAuditArguments([
          "--url",
          "http://127.0.0.1:8788/",
          "--pages",
          "/network, /stake/,/network",
          "--runs",
          "3",
          "--json",
          "a.json",
        ]),
      ).to.deep.equal({ help: false, url: "http://127.0.0.1:8788", pages: ["/network", "/stake"], runs: 3, json: "a.json" });
      expect(parseAuditArguments(["-h"]).help).to.equal(true);
    });

    it("refuses what it does not take, each with what is wrong", async function () {
      const refusals = await Promise.all(
        [
          ["--runs", "0"],
          ["--runs", "1.5"],
          ["--runs", "many"],
          ["--url", "127.0.0.1:8788"],
          ["--url", "ftp://host/"],
          ["--pages", "network"],
          ["--pages", ","],
          ["--json", ""],
          ["--json"],
          ["--speed", "fast"],
          ["/network"],
        ].map((args) => codeOf(() => parseAuditArguments(args))),
      );
      expect(refusals.every((refusal) => refusal.startsWith("USAGE: "))).to.equal(true, refusals.join("\n"));
      expect(refusals[0]).to.include('--runs takes a whole number of at least 1, not "0"');
      expect(refusals[3]).to.include("--url takes an http or https URL");
      expect(refusals[5]).to.include('starting with "/"');
      expect(refusals[9]).to.include("--speed");
    });

    it("exits 2 with the usage on a wrong argument, before opening anything", async function () {
      const run = await runScript(["--runs", "none"]);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('--runs takes a whole number of at least 1, not "none"');
      expect(run.stderr).to.include("usage: npm run audit:web --");
      expect(run.stdout).to.equal("");
    });
  });

  describe("what it audits", function () {
    let dir: string;
    before(async function () {
      dir = await mkdtemp(path.join(tmpdir(), "avn-web-audit-test-"));
    });
    after(async function () {
      await rm(dir, { recursive: true, force: true });
    });

    it("audits the running stack's web app, or says to start one or to give --url", async function () {
      const stackFile = path.join(dir, "stack.json");
      expect(await codeOf(() => resolveBaseUrl(undefined, stackFile))).to.match(
        /^NO_STACK: No running stack found \(.*stack\.json\): start one with `npm start`, or name the web app with --url/,
      );
      await writeFile(stackFile, JSON.stringify({ l1: { chainId: 900, rpcUrl: "http://127.0.0.1:1" } }));
      expect(await codeOf(() => resolveBaseUrl(undefined, stackFile))).to.match(/^NO_STACK: The running stack serves no web app/);
      await writeFile(stackFile, JSON.stringify({ web: { url: "http://127.0.0.1:8788/", explorerUrl: "http://127.0.0.1:8788/explorer" } }));
      expect(await resolveBaseUrl(undefined, stackFile)).to.equal("http://127.0.0.1:8788");
      expect(await resolveBaseUrl("http://localhost:9000", stackFile)).to.equal("http://localhost:9000");
    });

    it("says to install Chromium when there is none", async function () {
      expect(await codeOf(() => checkChromium(path.join(dir, "no-chromium")))).to.match(
        /^NO_CHROMIUM: No Chromium at .*no-chromium: install Debian's \(apt-get install chromium\), or set CHROMIUM_PATH/,
      );
    });

    it("takes the header's same-origin page links, each once, and refuses a page the header does not offer", async function () {
      const hrefs = ["/delegate", "/bridge", null, "https://example.com/docs", "/delegate", "stake", "/network/", "/explorer?chain=l2"];
      const discovered = sameOriginPaths(hrefs, "http://127.0.0.1:8788/delegate");
      expect(discovered).to.deep.equal(["/delegate", "/bridge", "/stake", "/network", "/explorer?chain=l2"]);
      expect(selectPages(discovered, undefined)).to.deep.equal(discovered);
      expect(selectPages(discovered, ["/network", "/bridge"])).to.deep.equal(["/network", "/bridge"]);
      expect(await codeOf(() => selectPages(discovered, ["/network", "/netwrok"]))).to.equal(
        "UNKNOWN_PAGE: /netwrok is not among the header's pages: /delegate, /bridge, /stake, /network, /explorer?chain=l2",
      );
      expect(await codeOf(() => selectPages([], undefined))).to.match(/^APP_UNREACHABLE: /);
    });
  });

  describe("its figures and bars", function () {
    it("reports the median run by performance score: the lower middle of an even number, a run without a score lowest", function () {
      const runs = (...scores: Array<number | null>) => scores.map((performance) => ({ performance }));
      expect(medianRun(runs(0.8))).to.equal(0);
      expect(medianRun(runs(0.91, 0.62, 0.78))).to.equal(2);
      expect(medianRun(runs(0.9, 0.7))).to.equal(1);
      expect(medianRun(runs(0.9, null, 0.8, 0.85))).to.equal(2);
      // Ties keep the runs' order.
      expect(medianRun(runs(0.8, 0.8, 0.8))).to.equal(1);
      expect(() => medianRun([])).to.throw(RangeError);
    });

    it("prints the Lighthouse table of the median runs: scores 0–100, LCP in seconds, TBT in ms", function () {
      const pages: WebAuditReport["pages"] = [
        { path: "/delegate", url: "", lighthouse: { runs: [figures({ performance: 0.995, lcpMs: 2_449 })], median: 0 } },
        {
          path: "/network",
          url: "",
          lighthouse: { runs: [figures({ performance: 0.9 }), figures({ performance: 0.724, lcpMs: 3_260, tbtMs: 412.6 })], median: 1 },
        },
        {
          path: "/stake",
          url: "",
          lighthouse: {
            runs: [
              figures({ performance: null, accessibility: null, bestPractices: null, lcpMs: null, tbtMs: null, runtimeError: "NO_FCP: …" }),
            ],
            median: 0,
          },
        },
      ];
      expect(lighthouseTable({ pages })).to.deep.equal([
        "| page | performance | accessibility | best practices | LCP | TBT |",
        "|---|---|---|---|---|---|",
        "| /delegate | 100 | 100 | 96 | 2.4 s | 12 ms |",
        "| /network | 72 | 100 | 96 | 3.3 s | 413 ms |",
        "| /stake | – | – | – | – | – |",
      ]);
      expect(unmetBars({ pages, axe: [] })).to.deep.equal([
        "/network: performance 72 < 90",
        "/network: LCP 3.26 s > 2.5 s",
        "/stake: Lighthouse could not measure the page (NO_FCP: …)",
        "/stake: performance has no score (bar ≥ 90)",
        "/stake: accessibility has no score (bar ≥ 98)",
        "/stake: best practices has no score (bar ≥ 95)",
        "/stake: LCP not measured (bar ≤ 2.5 s)",
      ]);
    });

    it("holds each score to its bar as Lighthouse shows it, rounded, and LCP to 2.5 s exactly", function () {
      const page = (run: Partial<LighthouseFigures>) => ({ path: "/p", url: "", lighthouse: { runs: [figures(run)], median: 0 } });
      expect(
        unmetBars({ pages: [page({ performance: 0.895, accessibility: 0.975, bestPractices: 0.945, lcpMs: 2_500 })], axe: [] }),
      ).to.deep.equal([]);
      expect(
        unmetBars({ pages: [page({ performance: 0.894, accessibility: 0.974, bestPractices: 0.944, lcpMs: 2_501 })], axe: [] }),
      ).to.deep.equal(["/p: performance 89 < 90", "/p: accessibility 97 < 98", "/p: best practices 94 < 95", "/p: LCP 2.50 s > 2.5 s"]);
    });

    it("prints axe's violations per page, scheme and width, each cell with one a bar unmet", function () {
      const contrast = { ...imageAlt, id: "color-contrast", impact: "serious", nodes: 3, targets: ["a", "b", "c"] };
      const cells = [cell("/a", "light", 360), cell("/a", "dark", 1280, [contrast, imageAlt])];
      expect(axeTable(cells)).to.deep.equal([
        "| page | scheme | width | violations |",
        "|---|---|---|---|",
        "| /a | light | 360 px | none |",
        "| /a | dark | 1280 px | color-contrast (serious, 3 nodes); image-alt (critical, 1 node) |",
      ]);
      expect(unmetBars({ pages: [], axe: cells })).to.deep.equal([
        "/a, dark, 1280 px: axe found 2 violations: color-contrast (serious, 3 nodes); image-alt (critical, 1 node)",
      ]);
    });

    it("says when every bar is met", function () {
      const report: WebAuditReport = {
        baseUrl: "http://127.0.0.1:8788",
        runs: 3,
        lighthouseVersion: "12.8.2",
        axeVersion: "4.11.0",
        pages: [{ path: "/a", url: "http://127.0.0.1:8788/a", lighthouse: { runs: [figures(), figures(), figures()], median: 1 } }],
        axe: [cell("/a", "light", 360)],
      };
      const printed = formatReport(report).split("\n");
      expect(printed[0]).to.equal(
        "Lighthouse 12.8.2, mobile preset (simulated throttling), http://127.0.0.1:8788: the median of 3 runs per page by performance score",
      );
      expect(printed.at(-1)).to.equal("Every bar is met.");
    });
  });

  describe("a whole audit of a small site", function () {
    let server: Server;
    let baseUrl: string;
    let dir: string;
    before(async function () {
      try {
        await access(CHROMIUM_PATH);
      } catch {
        requireService(this, CHROMIUM);
      }
      dir = await mkdtemp(path.join(tmpdir(), "avn-web-audit-site-"));
      server = createServer((request, response) => {
        const page = SITE[request.url === "/" ? "/a" : (request.url ?? "")];
        if (page === undefined) return response.writeHead(404).end();
        response.writeHead(200, { "content-type": page.type }).end(page.body);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async function () {
      server?.closeAllConnections();
      await new Promise((resolve) => (server === undefined ? resolve(null) : server.close(resolve)));
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it("finds both pages, scores them, finds the missing alt text in both schemes at both widths, and exits 1", async function () {
      this.timeout(240_000);
      const json = path.join(dir, "audit.json");
      const run = await runScript(["--url", baseUrl, "--json", json], { CHROMIUM_PATH });
      expect(run.code, run.stderr).to.equal(1);
      expect(run.stderr).to.include("the header's pages: /a, /b");

      const report = JSON.parse(await readFile(json, "utf8")) as WebAuditReport & { unmet: string[]; passed: boolean };
      expect(report.pages.map((page) => page.path)).to.deep.equal(["/a", "/b"]);
      for (const page of report.pages) {
        expect(page.lighthouse.runs).to.have.length(1);
        const [figures] = page.lighthouse.runs;
        expect(figures.runtimeError, page.path).to.equal(undefined);
        expect(figures.lighthouseVersion).to.match(/^12\./);
        expect([figures.formFactor, figures.throttlingMethod]).to.deep.equal(["mobile", "simulate"]);
        for (const score of [figures.performance, figures.accessibility, figures.bestPractices]) expect(score).to.be.within(0, 1);
        expect(figures.lcpMs).to.be.above(0);
        expect(figures.tbtMs).to.be.at.least(0);
      }
      // Lighthouse's accessibility category sees the image too, and names it where the score lost points.
      const [a, b] = report.pages.map((page) => page.lighthouse.runs[0]);
      expect(a.accessibility).to.equal(1);
      expect(b.accessibility).to.be.below(0.98);
      expect(b.shortfalls.filter((shortfall) => shortfall.category === "accessibility").map((shortfall) => shortfall.audit)).to.deep.equal([
        "image-alt",
      ]);

      // Page by page, as the table reads.
      expect(report.axe.map((found) => `${found.page} ${found.scheme} ${found.width}`)).to.deep.equal([
        "/a light 360",
        "/a light 1280",
        "/a dark 360",
        "/a dark 1280",
        "/b light 360",
        "/b light 1280",
        "/b dark 360",
        "/b dark 1280",
      ]);
      for (const found of report.axe)
        expect(found.violations.map((violation) => violation.id).sort(), `${found.page} ${found.scheme} ${found.width}`).to.deep.equal(
          found.page === "/b" ? ["image-alt"] : [],
        );

      expect(report.passed).to.equal(false);
      const axeLines = report.unmet.filter((line) => line.includes("axe found"));
      expect(axeLines.sort()).to.deep.equal(
        ["dark, 1280", "dark, 360", "light, 1280", "light, 360"].map(
          (where) => `/b, ${where} px: axe found 1 violation: image-alt (critical, 1 node)`,
        ),
      );
      expect(report.unmet).to.include(`/b: accessibility ${Math.round(b.accessibility! * 100)} < 98`);
      expect(report.unmet.filter((line) => line.startsWith("/a: accessibility"))).to.deep.equal([]);

      // What it printed: the two tables and the unmet bars.
      expect(run.stdout).to.include("| page | performance | accessibility | best practices | LCP | TBT |");
      expect(run.stdout).to.match(/^\| \/a \| \d{1,3} \| 100 \| \d{1,3} \| \d+\.\d s \| \d+ ms \|$/m);
      expect(run.stdout).to.match(/^\| \/b \| \d{1,3} \| \d{1,2} \| \d{1,3} \| \d+\.\d s \| \d+ ms \|$/m);
      expect(run.stdout).to.include("| /b | dark | 360 px | image-alt (critical, 1 node) |");
      expect(run.stdout).to.include("| /a | light | 1280 px | none |");
      for (const line of report.unmet) expect(run.stdout).to.include(`- ${line}`);
    });
  });
});

/** Runs `npm run audit:web`'s script with `args`; resolves with its exit code and output (the test's server keeps serving meanwhile). */
async function runScript(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "scripts/audit-web.ts", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (exitCode) => resolve(exitCode));
  });
  return { code, stdout, stderr };
}

/** The page at `path`: two pages linked from the header's page navigation (and one link elsewhere), B with an image without alt text. */
function sitePage(title: string, content: string): { type: string; body: string } {
  return {
    type: "text/html; charset=utf-8",
    body: `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="description" content="A small site for the web audit's test">
    <link rel="icon" href="data:,">
    <title>${title} · audit test</title>
    <style>nav ul { display: flex; gap: 8px; margin: 0; padding: 0; list-style: none } nav a { display: inline-block; padding: 12px 8px }</style>
  </head>
  <body>
    <header>
      <nav aria-label="Pages">
        <ul>
          <li><a href="/a">Page A</a></li>
          <li><a href="/b">Page B</a></li>
          <li><a href="https://example.com/">Elsewhere</a></li>
        </ul>
      </nav>
    </header>
    <main id="main" data-reads-in-flight="0">
      <h1>${title}</h1>
      ${content}
    </main>
  </body>
</html>
`,
  };
}

const SITE: Record<string, { type: string; body: string }> = {
  "/a": sitePage("Page A", "<p>Nothing wrong here.</p>"),
  // An image without alt text: axe's image-alt (critical), and Lighthouse's accessibility category.
  "/b": sitePage("Page B", '<p>A picture:</p>\n      <img src="/picture.svg" width="48" height="48">'),
  "/picture.svg": {
    type: "image/svg+xml",
    body: '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48"><rect width="48" height="48" fill="#246"/></svg>',
  },
};
