// Lighthouse on one page, as the "before" figures were taken: its default configuration (the mobile
// preset: a phone's screen, simulated throttling of a slow 4G network and a 4× slower CPU), the performance,
// accessibility and best-practices categories, in a fresh headless Chromium per run (chrome-launcher, as
// Lighthouse's own command line launches it). With several runs, the median by performance score is reported.
import { launch } from "chrome-launcher";
import lighthouse, { type Result } from "lighthouse";

import { sandboxFlags } from "./chromium.ts";
import { WebAuditError } from "./errors.ts";

/** The categories audited, as Lighthouse names them. */
export const CATEGORIES = ["performance", "accessibility", "best-practices"] as const;

/** What one Lighthouse run measured of a page: scores 0–1 as Lighthouse gives them, times in milliseconds. */
export interface LighthouseFigures {
  performance: number | null;
  accessibility: number | null;
  bestPractices: number | null;
  /** Largest Contentful Paint (simulated). */
  lcpMs: number | null;
  /** Total Blocking Time (simulated). */
  tbtMs: number | null;
  /** First Contentful Paint and Cumulative Layout Shift, for the JSON. */
  fcpMs: number | null;
  cls: number | null;
  /** Why Lighthouse could not measure the page (its code and message), when it could not. */
  runtimeError?: string;
  /** Where the scores lost points: each weighted audit of the three categories that did not pass in full. */
  shortfalls: LighthouseShortfall[];
  warnings: string[];
  lighthouseVersion: string;
  /** Lighthouse's measure of this machine's speed (its CPU benchmark), which simulated throttling scales by. */
  benchmarkIndex: number | null;
  formFactor: string;
  throttlingMethod: string;
}

/** A weighted audit of a category that scored below 1 (0–1, null when it errored). */
export interface LighthouseShortfall {
  category: string;
  audit: string;
  title: string;
  score: number | null;
  weight: number;
}

/** A page's Lighthouse runs and which of them is reported. */
export interface LighthousePage {
  runs: LighthouseFigures[];
  /** The index in `runs` of the median run by performance score. */
  median: number;
}

/** Runs Lighthouse `runs` times on `url`, one after another, each in a Chromium of its own. */
export async function lighthousePage(
  url: string,
  options: { chromiumPath: string; runs: number; log?: (line: string) => void },
): Promise<LighthousePage> {
  const runs: LighthouseFigures[] = [];
  for (let run = 1; run <= options.runs; run += 1) {
    options.log?.(`Lighthouse: ${url}, run ${run} of ${options.runs}`);
    runs.push(await lighthouseRun(url, options.chromiumPath));
  }
  return { runs, median: medianRun(runs) };
}

/** One Lighthouse run on `url` in a fresh headless Chromium at `chromiumPath`. */
export async function lighthouseRun(url: string, chromiumPath: string): Promise<LighthouseFigures> {
  const chrome = await launch({ chromePath: chromiumPath, chromeFlags: ["--headless=new", ...sandboxFlags()], logLevel: "silent" });
  try {
    const result = await lighthouse(url, { port: chrome.port, output: "json", logLevel: "error", onlyCategories: [...CATEGORIES] });
    if (result === undefined) throw new WebAuditError("LIGHTHOUSE_FAILED", `Lighthouse returned no result for ${url}`);
    return figuresOf(result.lhr);
  } finally {
    chrome.kill();
  }
}

/** The figures of a Lighthouse result. */
export function figuresOf(lhr: Result): LighthouseFigures {
  const score = (category: string) => lhr.categories[category]?.score ?? null;
  const numeric = (audit: string) => lhr.audits[audit]?.numericValue ?? null;
  const figures: LighthouseFigures = {
    performance: score("performance"),
    accessibility: score("accessibility"),
    bestPractices: score("best-practices"),
    lcpMs: numeric("largest-contentful-paint"),
    tbtMs: numeric("total-blocking-time"),
    fcpMs: numeric("first-contentful-paint"),
    cls: numeric("cumulative-layout-shift"),
    shortfalls: shortfallsOf(lhr),
    warnings: lhr.runWarnings.map(String),
    lighthouseVersion: lhr.lighthouseVersion,
    benchmarkIndex: lhr.environment.benchmarkIndex ?? null,
    formFactor: lhr.configSettings.formFactor,
    throttlingMethod: lhr.configSettings.throttlingMethod,
  };
  if (lhr.runtimeError !== undefined) figures.runtimeError = `${lhr.runtimeError.code}: ${lhr.runtimeError.message}`;
  return figures;
}

/** Each weighted audit of the audited categories that did not pass in full (not those that do not apply). */
export function shortfallsOf(lhr: Result): LighthouseShortfall[] {
  const shortfalls: LighthouseShortfall[] = [];
  for (const category of CATEGORIES) {
    for (const ref of lhr.categories[category]?.auditRefs ?? []) {
      const audit = lhr.audits[ref.id];
      if (ref.weight === 0 || audit === undefined) continue;
      if (audit.scoreDisplayMode === "notApplicable" || audit.scoreDisplayMode === "manual" || audit.scoreDisplayMode === "informative")
        continue;
      if (audit.score !== null && audit.score >= 1) continue;
      shortfalls.push({ category, audit: ref.id, title: audit.title, score: audit.score, weight: ref.weight });
    }
  }
  return shortfalls;
}

/**
 * The index of the median run by performance score: the runs sorted by score (a run without one lowest, ties
 * in run order), the middle one, or of an even number the lower of the two middle ones.
 */
export function medianRun(runs: ReadonlyArray<Pick<LighthouseFigures, "performance">>): number {
  if (runs.length === 0) throw new RangeError("no runs to take the median of");
  const order = runs.map((_, index) => index).sort((a, b) => (runs[a].performance ?? -1) - (runs[b].performance ?? -1) || a - b);
  return order[Math.floor((order.length - 1) / 2)];
}
