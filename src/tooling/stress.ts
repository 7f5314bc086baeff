import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";

/** One run of one test file. */
export interface StressRun {
  file: string;
  run: number;
  passed: boolean;
  seconds: number;
  /** Where the run's whole output is. */
  logFile: string;
}

export interface StressOptions {
  files: string[];
  /** Runs of each file, one after another. */
  runs: number;
  /** The shell command that runs one file once (exit code 0: passed). */
  commandFor: (file: string) => string;
  /** The folder the runs' logs go to. */
  logDir: string;
  /** Busy processes kept running beside the runs, each using one core (0: none). */
  hogs: number;
  cwd: string;
  log: (line: string) => void;
}

/**
 * Runs each of `files` `runs` times in a row while `hogs` busy processes keep that many cores at 100%, as a
 * loaded CI machine does, and returns every run's result. The processes are one after another, never side
 * by side: each run has the whole machine but for the hogs, and no two write one file.
 */
export async function runStress(options: StressOptions): Promise<StressRun[]> {
  await mkdir(options.logDir, { recursive: true });
  const hogs = Array.from({ length: options.hogs }, () => startCpuHog());
  const results: StressRun[] = [];
  try {
    for (const file of options.files) {
      for (let run = 1; run <= options.runs; run += 1) {
        const logFile = path.join(options.logDir, `${file.replace(/[^A-Za-z0-9]+/g, "-")}-${run}.log`);
        const began = performance.now();
        const code = await runLogged(options.commandFor(file), options.cwd, logFile);
        const result = { file, run, passed: code === 0, seconds: (performance.now() - began) / 1000, logFile };
        results.push(result);
        options.log(
          `${file} run ${run}/${options.runs}: ${result.passed ? "passed" : `FAILED (${logFile})`} in ${result.seconds.toFixed(1)} s`,
        );
      }
    }
  } finally {
    // Gone before this returns: the next thing the caller runs has the machine back.
    await Promise.all(
      hogs.map((hog) => new Promise((resolve) => (hog.exitCode === null ? hog.once("exit", resolve).kill("SIGKILL") : resolve(null)))),
    );
  }
  return results;
}

/** The summary table: per file, the runs that passed, and the slowest and median run. */
export function formatStressTable(results: StressRun[]): string[] {
  const files = [...new Set(results.map((result) => result.file))];
  const width = Math.max("file".length, ...files.map((file) => file.length));
  const lines = [`${"file".padEnd(width)}  passed  median s  slowest s`];
  for (const file of files) {
    const runs = results.filter((result) => result.file === file);
    const seconds = runs.map((result) => result.seconds).sort((a, b) => a - b);
    const median = seconds[Math.floor((seconds.length - 1) / 2)];
    const passed = `${runs.filter((result) => result.passed).length}/${runs.length}`;
    lines.push(`${file.padEnd(width)}  ${passed.padStart(6)}  ${median.toFixed(1).padStart(8)}  ${seconds.at(-1)!.toFixed(1).padStart(9)}`);
  }
  return lines;
}

/** A process that keeps one core busy until killed. */
function startCpuHog(): ChildProcess {
  const hog = spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
  hog.on("error", () => undefined);
  return hog;
}

/** Runs `command` through the shell with its output in `logFile`; resolves to its exit code (1 for a signal). */
function runLogged(command: string, cwd: string, logFile: string): Promise<number> {
  return new Promise((resolve) => {
    const out = createWriteStream(logFile);
    const child = spawn(command, { cwd, shell: true, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.once("error", (error) => out.end(`\n${error.message}\n`, () => resolve(127)));
    child.once("close", (code) => out.end(() => resolve(code ?? 1)));
  });
}
