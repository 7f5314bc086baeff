// The audit's figures as Markdown, and the bars they are held to (issue 54): each unmet bar is a line, and any
// makes `npm run audit:web` exit 1.
import type { AxeCell, AxeViolation } from "./axe.ts";
import type { LighthouseFigures, LighthousePage } from "./lighthouse.ts";

/** The bars: Lighthouse scores (0–100, as Lighthouse shows them) at least these, LCP at most, no axe violation. */
export const BARS = { performance: 90, accessibility: 98, bestPractices: 95, lcpSeconds: 2.5, axeViolations: 0 } as const;

/** Everything one audit measured. */
export interface WebAuditReport {
  baseUrl: string;
  /** Lighthouse runs per page. */
  runs: number;
  lighthouseVersion: string;
  axeVersion: string;
  pages: Array<{ path: string; url: string; lighthouse: LighthousePage }>;
  axe: AxeCell[];
}

/** A 0–1 score as Lighthouse shows it: 0–100, rounded. */
export function percent(score: number | null): number | null {
  return score === null ? null : Math.round(score * 100);
}

/** The reported (median) run of a page. */
export function reportedRun(page: { lighthouse: LighthousePage }): LighthouseFigures {
  return page.lighthouse.runs[page.lighthouse.median];
}

/** `| page | performance | accessibility | best practices | LCP | TBT |`, one row per page (its median run). */
export function lighthouseTable(report: Pick<WebAuditReport, "pages">): string[] {
  const lines = ["| page | performance | accessibility | best practices | LCP | TBT |", "|---|---|---|---|---|---|"];
  for (const page of report.pages) {
    const run = reportedRun(page);
    const cells = [
      page.path,
      orDash(percent(run.performance)),
      orDash(percent(run.accessibility)),
      orDash(percent(run.bestPractices)),
      run.lcpMs === null ? "–" : `${(run.lcpMs / 1000).toFixed(1)} s`,
      run.tbtMs === null ? "–" : `${Math.round(run.tbtMs)} ms`,
    ];
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines;
}

/** `| page | scheme | width | violations |`, one row per page × scheme × width. */
export function axeTable(cells: readonly AxeCell[]): string[] {
  const lines = ["| page | scheme | width | violations |", "|---|---|---|---|"];
  for (const cell of cells)
    lines.push(
      `| ${cell.page} | ${cell.scheme} | ${cell.width} px | ${cell.violations.length === 0 ? "none" : violationList(cell.violations)} |`,
    );
  return lines;
}

/** `image-alt (critical, 1 node); color-contrast (serious, 3 nodes)`. */
export function violationList(violations: readonly AxeViolation[]): string {
  return violations
    .map((violation) => `${violation.id} (${violation.impact ?? "no impact given"}, ${count(violation.nodes, "node")})`)
    .join("; ");
}

/** One line per unmet bar: per page, each Lighthouse figure below its bar; per page × scheme × width, axe's violations. */
export function unmetBars(report: Pick<WebAuditReport, "pages" | "axe">): string[] {
  const unmet: string[] = [];
  for (const page of report.pages) {
    const run = reportedRun(page);
    if (run.runtimeError !== undefined) unmet.push(`${page.path}: Lighthouse could not measure the page (${run.runtimeError})`);
    const scores: Array<[string, number | null, number]> = [
      ["performance", run.performance, BARS.performance],
      ["accessibility", run.accessibility, BARS.accessibility],
      ["best practices", run.bestPractices, BARS.bestPractices],
    ];
    for (const [name, score, bar] of scores) {
      const shown = percent(score);
      if (shown === null) unmet.push(`${page.path}: ${name} has no score (bar ≥ ${bar})`);
      else if (shown < bar) unmet.push(`${page.path}: ${name} ${shown} < ${bar}`);
    }
    if (run.lcpMs === null) unmet.push(`${page.path}: LCP not measured (bar ≤ ${BARS.lcpSeconds} s)`);
    else if (run.lcpMs > BARS.lcpSeconds * 1000) unmet.push(`${page.path}: LCP ${(run.lcpMs / 1000).toFixed(2)} s > ${BARS.lcpSeconds} s`);
  }
  for (const cell of report.axe) {
    if (cell.violations.length <= BARS.axeViolations) continue;
    unmet.push(
      `${cell.page}, ${cell.scheme}, ${cell.width} px: axe found ${count(cell.violations.length, "violation")}: ${violationList(cell.violations)}`,
    );
  }
  return unmet;
}

/** The whole printout: the Lighthouse table, the axe table, then each unmet bar (or that all are met). */
export function formatReport(report: WebAuditReport): string {
  const unmet = unmetBars(report);
  const runs = report.runs === 1 ? "one run per page" : `the median of ${report.runs} runs per page by performance score`;
  return [
    `Lighthouse ${report.lighthouseVersion}, mobile preset (simulated throttling), ${report.baseUrl}: ${runs}`,
    "",
    ...lighthouseTable(report),
    "",
    `axe ${report.axeVersion} (its default rules), light and dark colour schemes, 360 and 1280 px wide`,
    "",
    ...axeTable(report.axe),
    "",
    ...(unmet.length === 0
      ? ["Every bar is met."]
      : [
          `Unmet bars (performance ≥ ${BARS.performance}, accessibility ≥ ${BARS.accessibility}, best practices ≥ ${BARS.bestPractices}, LCP ≤ ${BARS.lcpSeconds} s, no axe violation):`,
          ...unmet.map((line) => `- ${line}`),
        ]),
  ].join("\n");
}

function orDash(value: number | null): string {
  return value === null ? "–" : String(value);
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
