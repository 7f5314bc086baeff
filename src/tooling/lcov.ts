/** Line coverage of one source file, read from an lcov report. */
export interface FileLineCoverage {
  file: string;
  linesFound: number;
  linesHit: number;
}

/**
 * Reads per-file line coverage from lcov text (the `SF`, `DA` and `end_of_record` records). Line counts
 * come from the `DA` records themselves rather than `LF`/`LH`, which not every producer writes.
 */
export function parseLcovLineCoverage(lcov: string): FileLineCoverage[] {
  const files: FileLineCoverage[] = [];
  let current: FileLineCoverage | undefined;
  for (const rawLine of lcov.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line.startsWith("SF:")) {
      current = { file: line.slice(3), linesFound: 0, linesHit: 0 };
    } else if (line.startsWith("DA:") && current !== undefined) {
      const [, hits] = line.slice(3).split(",");
      current.linesFound += 1;
      if (Number(hits) > 0) current.linesHit += 1;
    } else if (line === "end_of_record" && current !== undefined) {
      files.push(current);
      current = undefined;
    }
  }
  return files;
}

/** The files whose path starts with `prefix`, or with one of `prefix`'s entries. */
export function filesUnder(files: FileLineCoverage[], prefix: string | readonly string[]): FileLineCoverage[] {
  const prefixes: readonly string[] = typeof prefix === "string" ? [prefix] : prefix;
  return files.filter((file) => prefixes.some((start) => file.file.startsWith(start)));
}

/** The combined line coverage, in percent, of the files whose path starts with `prefix` (or one of its entries). */
export function lineCoveragePercent(files: FileLineCoverage[], prefix: string | readonly string[]): { percent: number; files: number } {
  const selected = filesUnder(files, prefix);
  const found = selected.reduce((sum, file) => sum + file.linesFound, 0);
  const hit = selected.reduce((sum, file) => sum + file.linesHit, 0);
  return { percent: found === 0 ? 0 : (100 * hit) / found, files: selected.length };
}
