// `npm test`: runs the phases below in order, streaming their output, and stops at the first that fails.
// At the end, and when a phase fails, it prints a table (phase, seconds, result) and a line counting the
// tests skipped because a service they need is missing (test/helpers/services.ts records each skip in the
// file this runner names in AVN_SKIPPED_TESTS_FILE; under CI=true those tests fail instead). Exits 1 when a
// phase failed.
//
//   node scripts/test-phases.mjs [--from <phase>] [--list]
//   npm test -- --from test:mocha:network  resumes a failed run at that phase (`tree-state:save` still runs
//                                        first, recording the tree as it is now: fixes made since count)
//
// PHASES is the one list of what `npm test` runs. Plain JavaScript without dependencies, like
// tree-state.mjs; runPhases is exported for test/ts/repository/TestPhases.ts, which runs it on a list of
// its own.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The variable test/helpers/services.ts reads: the file it appends one JSON line to per skip. */
export const SKIPPED_TESTS_FILE_VARIABLE = "AVN_SKIPPED_TESTS_FILE";
/** Where `rehearsal:copy` puts the project's copy for test/ts/rehearsal/Rehearsal.ts (which removes it). */
export const REHEARSAL_COPY_VARIABLE = "AVN_REHEARSAL_COPY";

/** Why a workspace's `npm test` phase cannot run (it has no test script), or null. */
function withoutTestScript(workspaceDir) {
  const manifest = path.join(root, workspaceDir, "package.json");
  const scripts = existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).scripts : undefined;
  return scripts?.test === undefined ? `${workspaceDir} has no "test" script` : null;
}

/** Why the node's image cannot be built here (no Docker or Podman engine answers, no buildah), or null. */
function withoutImageTool() {
  const works = (command, args) => spawnSync(command, args, { stdio: "ignore" }).status === 0;
  if (works("docker", ["info"]) || works("podman", ["info"]) || works("buildah", ["--version"])) return null;
  return "no Docker or Podman engine and no buildah (apt-get install buildah debootstrap)";
}

/**
 * Folders of test/ts whose files run in the "network" mocha process; every other file runs in "services"
 * but for the "rehearsal" and "qos" processes'. The devnets of the OP stack (web, bridge, devnet), and the SDK's
 * tests (their own servers and chains): the end-to-end network and the consumer example are in "services".
 * (The attestation tests, moved here to even the two out, were followed by the shared devnet's deployment
 * failing in two fresh-clone runs of three, a transaction of its L2 deploy dropped; back in "services", pending
 * the cause.) A folder may be a subfolder: the webhooks' tests (their own anvil and PostgreSQL, about 50 s) run
 * here, and the credits channel's (an anvil of their own, the service killed mid-webhook). The intent layer's
 * (the solver's about 150 s on a devnet of its own) too, since the devnet's proposer keeps up with its L2 and
 * the web app's withdrawal no longer waits 110 s for it; the storage proofs' fuzzing (about 45 s of computing)
 * is in "services". An entry may also be one file: of the devnet's tests, only the two on the shared test devnet
 * run here; the others, each on chains of their own (about 75 s), run in "services", which ended about 160 s
 * before this process.
 */
export const NETWORK_TEST_FOLDERS = [
  "web",
  "bridge",
  "devnet/RpcParity.ts",
  "devnet/WalletFlows.ts",
  "sdk",
  "api/webhooks",
  "credits",
  "intents",
];
/**
 * The third mocha process: the rehearsal of the live deployment (its own devnet; mostly anvil mining and
 * the operator's scripts in child processes, on a copy of the project with the plain build), beside the two
 * others while they wait on their chains. (Begun beside the static checks instead, it ended the suite a minute
 * sooner, but the extra load made tests of the other processes fail at random in two fresh-clone runs of three.)
 */
export const REHEARSAL_TEST_FOLDERS = ["rehearsal"];
/**
 * The fourth, after the rehearsal in its lane: the quality-of-service network end to end (four node processes
 * through a whole reward epoch on a devnet of its own, about four minutes of mostly waiting on L2 blocks) and
 * the chaos suite's short form (the network of `npm start`, about three minutes through its faults). Its own
 * process, not the rehearsal's: it deploys the instrumented build of `build:coverage` (above 24 KiB), which only
 * a `--coverage` run deploys (its devnets' size limit lifted). It collects no coverage of its own: Hardhat
 * records it on its in-process chain only.
 */
export const QOS_TEST_FOLDERS = ["qos", "chaos"];

/** The mocha test files of one of the mocha processes, relative to the root, in Hardhat's order. */
export function mochaFiles(half, testsDir = path.join(root, "test", "ts")) {
  const files = readdirSync(testsDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs|cjs|mts|cts)$/.test(entry.name))
    .map((entry) => path.relative(testsDir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
  const processOf = (file) => {
    const within = (entries) => entries.some((entry) => (entry.endsWith(".ts") ? file === entry : file.startsWith(`${entry}/`)));
    if (within(NETWORK_TEST_FOLDERS)) return "network";
    if (within(REHEARSAL_TEST_FOLDERS)) return "rehearsal";
    if (within(QOS_TEST_FOLDERS)) return "qos";
    return "services";
  };
  return files.filter((file) => processOf(file) === half).map((file) => `test/ts/${file}`);
}

/**
 * The variable that makes a `hardhat test --coverage` process save its coverage data and nothing else
 * (src/tooling/coverage/collect-only.ts: no clearing of the shared folder at its start, no report at its end).
 */
export const COVERAGE_COLLECT_ONLY_VARIABLE = "AVN_COVERAGE_COLLECT_ONLY";
/** Where Hardhat's coverage plugin keeps the mocha runs' data files (one per process), cleared before they start. */
export const MOCHA_COVERAGE_DATA = "coverage/data/mocha";

/**
 * One mocha process's command. None builds: they run side by side, and every build saves Hardhat's compile
 * cache through one temporary file (two processes saving it at once fail with ENOENT on its rename) and
 * rewrites typechain-types/, which the other reads. The build phases before them made everything they run on.
 * The three that run contracts run with `--coverage` on the instrumented build of `build:coverage`, each
 * saving a data file of its own (what Hardhat's in-process chain ran); `coverage:report` reports once after
 * them. The rehearsal runs no contract in its own process (its devnet and the operator's scripts are child
 * processes, on a copy of the project with the plain build): no coverage.
 */
export function mochaCommand(half) {
  const files = mochaFiles(half).join(" ");
  if (half === "rehearsal") return `hardhat test mocha --no-compile ${files}`;
  return `${COVERAGE_COLLECT_ONLY_VARIABLE}=1 hardhat test mocha --no-compile --coverage ${files}`;
}

/** What the mocha processes wait for: the instrumented build, and the static checks that run beside it. */
const MOCHA_AFTER = ["lint", "typecheck", "coverage:clear"];

/**
 * What `npm test` runs, in order: `name` (for the table and --from), `command` (run by the shell in the
 * project's root, with node_modules/.bin on PATH as npm scripts have it), and optionally `always` (runs
 * even when --from starts later), `skipWhen` (returns why the phase cannot run, or null), `together`
 * (adjacent phases with the same value run at the same time, their output held back and printed whole as
 * each ends: the static checks each use one core, and this machine has two), `lane` (phases of one group
 * and lane run one after another, beside the group's other phases) and `after` (the earlier phases of its
 * group it waits for, beside the others).
 */
export const PHASES = [
  // What git sees as changed before the run, for the last phase to compare.
  { name: "tree-state:save", command: "node scripts/tree-state.mjs save", always: true },
  // Contracts, TypeChain types, then the web app's ABIs; then, on the contracts just built, the gas snapshot
  // and bench on the uninstrumented bytecode and the web app's unit tests (Vitest, which read the ABIs).
  // Beside them, the checks that need no build: they use the core the compiler leaves idle.
  { name: "build", command: "npm run build", together: "build", lane: "build" },
  // The rehearsal's copy of the project, made from the plain build before the coverage build replaces it.
  { name: "rehearsal:copy", command: `node scripts/rehearsal-copy.ts "$${REHEARSAL_COPY_VARIABLE}"`, together: "build", lane: "build" },
  { name: "test:gas", command: "npm run test:gas", together: "build", lane: "build" },
  { name: "test:web", command: "npm test -w @avn/web", skipWhen: () => withoutTestScript("apps/web"), together: "build", lane: "build" },
  { name: "format:check", command: "npm run format:check", together: "build" },
  { name: "lint:sol", command: "npm run lint:sol", together: "build" },
  { name: "lint:docker", command: "npm run lint:docker", together: "build" },
  // The checks that read the build's types, beside the Solidity tests (fuzz, invariants) on the build's
  // contracts and then the instrumented build the mocha tests run on (a coverage build replaces the plain
  // one, hence last, and without TypeChain, which the checks beside it read). All are work for the
  // processor; none waits on a clock. The coverage gate reads the mocha tests' coverage alone (95.8% of the
  // contracts' lines; the Solidity tests add the few lines of a packing helper only they use), and
  // instrumenting the Solidity tests would compile every test contract a second time.
  { name: "lint", command: "npm run lint", together: "tests" },
  { name: "typecheck", command: "npm run typecheck", together: "tests" },
  { name: "test:solidity", command: "hardhat test solidity --no-typechain", together: "tests", lane: "solidity" },
  { name: "build:coverage", command: "hardhat build --coverage --no-typechain --quiet", together: "tests", lane: "solidity" },
  // The mocha processes only add data files: what an earlier (interrupted) run left must not count.
  {
    name: "coverage:clear",
    command: `node -e "require('node:fs').rmSync('${MOCHA_COVERAGE_DATA}', { recursive: true, force: true })"`,
    together: "tests",
    lane: "solidity",
  },
  // The mocha tests, in three lanes side by side once the instrumented build is made (and the checks beside it
  // have ended: the mocha processes load the machine enough): most of their time is spent waiting on chains'
  // blocks and on servers (one core's worth of work at most each). The rehearsal and then the QoS network (each
  // on a devnet of its own) in one lane. All but the rehearsal save coverage data, reported by coverage:report.
  // None builds (mochaCommand).
  { name: "test:mocha:network", command: mochaCommand("network"), together: "tests", after: MOCHA_AFTER },
  { name: "test:mocha:services", command: mochaCommand("services"), together: "tests", after: MOCHA_AFTER },
  { name: "test:mocha:rehearsal", command: mochaCommand("rehearsal"), together: "tests", lane: "own-devnets", after: MOCHA_AFTER },
  { name: "test:mocha:qos", command: mochaCommand("qos"), together: "tests", lane: "own-devnets" },
  // The node's container image, beside the mocha processes on the core they leave idle (its build mostly
  // waits on the disk and the network): the end-to-end suite that runs it (test/ts/e2e/node-image-suite.ts)
  // waits for this build when it gets there first, and then finds the image up to date.
  {
    name: "image:node",
    command: "npm run image:node -- --quiet",
    together: "tests",
    after: ["coverage:clear"],
    skipWhen: withoutImageTool,
  },
  // The one coverage report, alone (it writes coverage/lcov.info and coverage/html/): Hardhat's coverage plugin
  // merges the mocha processes' data files. Its build compiles nothing (the instrumented build is current) and
  // records the statement map; no TypeChain, which would regenerate the types from the instrumented artifacts.
  { name: "coverage:report", command: "hardhat run --coverage --no-typechain scripts/coverage-report.ts" },
  // Reads coverage/lcov.info only: plain Node.
  { name: "check-coverage", command: "node scripts/check-coverage.ts" },
  { name: "tree-state:check", command: "node scripts/tree-state.mjs check" },
];

/**
 * How much of a failed phase's output, if it ran beside others, is printed again just before the table: enough for
 * mocha's list of failures with their stacks. A log's excerpt is usually its end, and the phases that ended after
 * the failed one printed theirs after it.
 */
export const FAILED_OUTPUT_LINES = 80;

/** The last `count` lines of `text` (its trailing blank lines left out). */
function lastLines(text, count) {
  return text.trimEnd().split("\n").slice(-count).join("\n");
}

/** Whether a phase's row stops what waits for it: it failed, or did not run for a failure before it. */
const blocks = (row) => row.result.startsWith("FAILED") || row.result === "not run";

/** Runs `command` through the shell, output streamed; resolves to its exit code (or the signal that ended it). */
function runCommand(command, { cwd, env, capture = false }) {
  return new Promise((resolve) => {
    // No stdin: a test runner must not wait for input (nor Vitest start its watch mode). A phase run beside
    // others writes into a buffer, printed whole when it ends, so outputs do not interleave.
    const child = spawn(command, { cwd, env, shell: true, stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"] });
    const output = [];
    if (capture) for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk) => output.push(chunk));
    // Ctrl-C reaches the phase from the terminal (same process group): the runner only waits for it to end,
    // then prints the table. A SIGTERM sent to the runner alone is passed on.
    const onInterrupt = () => undefined;
    const onTerminate = () => child.kill("SIGTERM");
    process.on("SIGINT", onInterrupt);
    process.on("SIGTERM", onTerminate);
    const done = (result) => {
      process.off("SIGINT", onInterrupt);
      process.off("SIGTERM", onTerminate);
      resolve(result);
    };
    child.once("error", (error) => done({ code: 127, error: error.message, output: Buffer.concat(output) }));
    child.once("close", (code, signal) => done({ code, signal, output: Buffer.concat(output) }));
  });
}

/**
 * Runs `phases` in order until one fails. Returns each phase's row for the table: `{ name, seconds, result }`
 * with `result` "passed", "FAILED …", "skipped: …" or "not run …", and whether all ran and passed.
 */
export async function runPhases(phases, { from, cwd = root, env = process.env, log = console.log } = {}) {
  const start = from === undefined ? 0 : phases.findIndex((phase) => phase.name === from);
  if (start < 0) throw new Error(`no phase named "${from}"; the phases: ${phases.map((phase) => phase.name).join(", ")}`);
  const bin = path.join(root, "node_modules", ".bin");
  const pathEntries = (env.PATH ?? "").split(path.delimiter);
  const childEnv = pathEntries.includes(bin) ? env : { ...env, PATH: [bin, ...pathEntries].join(path.delimiter) };
  const rows = [];
  let failed = false;
  const began = performance.now();
  /** Runs `phase` (or says why it does not run) and resolves to its row; `capture` holds its output back. */
  const runOne = async (phase, index, capture) => {
    if (index < start && phase.always !== true) return { name: phase.name, seconds: null, result: `not run (--from ${from})` };
    const skipped = phase.skipWhen?.() ?? null;
    if (skipped !== null) {
      log(`\n=== ${phase.name}: skipped, ${skipped}`);
      return { name: phase.name, seconds: null, result: `skipped: ${skipped}` };
    }
    if (!capture) log(`\n=== ${phase.name}: ${phase.command}`);
    const phaseBegan = performance.now();
    const { code, signal, error, output } = await runCommand(phase.command, { cwd, env: childEnv, capture });
    const seconds = (performance.now() - phaseBegan) / 1000;
    if (capture) {
      log(`\n=== ${phase.name}: ${phase.command} (ran beside others; its output, ${seconds.toFixed(1)} s)`);
      if (output.length > 0) process.stdout.write(output);
    }
    if (code === 0) return { name: phase.name, seconds, result: "passed" };
    const result = `FAILED (${error ?? (signal ? `signal ${signal}` : `exit ${code}`)})`;
    // Printed again before the table (main): other phases' output may have come after it.
    return { name: phase.name, seconds, result, ...(capture ? { outputEnd: lastLines(output.toString(), FAILED_OUTPUT_LINES) } : {}) };
  };
  for (let index = 0; index < phases.length;) {
    // A run of adjacent phases with the same `together` value, or one phase.
    let end = index + 1;
    if (phases[index].together !== undefined) while (end < phases.length && phases[end].together === phases[index].together) end += 1;
    const batch = phases.slice(index, end);
    if (failed) {
      rows.push(...batch.map((phase) => ({ name: phase.name, seconds: null, result: "not run" })));
    } else {
      // Within a group, a phase begins once the phases it waits for have passed (or were skipped): the one
      // before it in its `lane`, and those its `after` names. The others run side by side. A phase whose wait
      // ended in a failure is not run, and neither is what waits for it.
      const offsetOf = new Map(batch.map((phase, offset) => [phase.name, offset]));
      const lastOfLane = new Map();
      const running = batch.map(() => undefined);
      for (const [offset, phase] of batch.entries()) {
        const waitsFor = (phase.after ?? []).map((name) => {
          const earlier = offsetOf.get(name);
          if (earlier === undefined || earlier >= offset)
            throw new Error(`phase "${phase.name}" waits for "${name}", which is no earlier phase of its group`);
          return earlier;
        });
        if (phase.lane !== undefined && lastOfLane.has(phase.lane)) waitsFor.push(lastOfLane.get(phase.lane));
        if (phase.lane !== undefined) lastOfLane.set(phase.lane, offset);
        running[offset] = Promise.all(waitsFor.map((earlier) => running[earlier])).then((before) =>
          before.some(blocks) ? { name: phase.name, seconds: null, result: "not run" } : runOne(phase, index + offset, batch.length > 1),
        );
      }
      const batchRows = await Promise.all(running);
      rows.push(...batchRows);
      failed = batchRows.some((row) => row.result.startsWith("FAILED"));
    }
    index = end;
  }
  rows.wallSeconds = (performance.now() - began) / 1000;
  return { rows, ok: !failed };
}

/** The table's lines: phase, seconds, result, and the total time (from start to end: phases run together overlap). */
export function formatTable(rows) {
  const width = Math.max("phase".length, "total".length, ...rows.map((row) => row.name.length));
  const line = (name, seconds, result) => `${name.padEnd(width)}  ${seconds.padStart(8)}  ${result}`.trimEnd();
  const total = rows.wallSeconds ?? rows.reduce((sum, row) => sum + (row.seconds ?? 0), 0);
  return [
    line("phase", "seconds", "result"),
    ...rows.map((row) => line(row.name, row.seconds === null ? "-" : row.seconds.toFixed(1), row.result)),
    line("total", total.toFixed(1), ""),
  ];
}

/** The skips test/helpers/services.ts recorded in `file` (one JSON object per line); none when it is absent. */
export function readSkips(file) {
  if (file === undefined || !existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/**
 * The summary of `skips`: one line counting the skipped tests by missing service, then one line per skip
 * (the test, or the suite a `before` hook skipped whole).
 */
export function formatSkips(skips) {
  if (skips.length === 0) return ["no tests skipped"];
  const tests = (count) => `${count} ${count === 1 ? "test" : "tests"}`;
  const groups = new Map();
  for (const skip of skips) {
    const reason = `${skip.name} ${skip.missing} (${skip.install})`;
    groups.set(reason, (groups.get(reason) ?? 0) + skip.tests);
  }
  const total = skips.reduce((sum, skip) => sum + skip.tests, 0);
  const reasons = [...groups].map(([reason, count]) => (groups.size === 1 ? reason : `${count} × ${reason}`));
  return [
    `${tests(total)} skipped: ${reasons.join("; ")}`,
    ...skips.map((skip) => `  ${skip.title}${skip.tests === 1 ? "" : ` (${tests(skip.tests)})`}: needs ${skip.name}`),
  ];
}

/**
 * Runs `phases` (the whole of `npm test`) with a fresh skip record, then prints the table and the skip
 * summary; returns the exit code (0, 1 when a phase failed, 2 for a wrong argument).
 */
export async function main(phases, argv, { env = process.env, log = console.log } = {}) {
  let from;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === "--list") {
      for (const phase of phases) log(`${phase.name.padEnd(18)} ${phase.command}`);
      return 0;
    } else if (argv[i] === "--from" && i + 1 < argv.length) {
      from = argv[(i += 1)];
    } else if (argv[i].startsWith("--from=")) {
      from = argv[i].slice("--from=".length);
    } else {
      console.error("usage: node scripts/test-phases.mjs [--from <phase>] [--list]");
      return 2;
    }
  }
  if (from !== undefined && !phases.some((phase) => phase.name === from)) {
    console.error(`No phase named "${from}". The phases: ${phases.map((phase) => phase.name).join(", ")}`);
    return 2;
  }
  const dir = mkdtempSync(path.join(tmpdir(), "avn-test-phases-"));
  const skipsFile = path.join(dir, "skipped-tests.jsonl");
  writeFileSync(skipsFile, "");
  try {
    const { rows, ok } = await runPhases(phases, {
      from,
      env: { ...env, [SKIPPED_TESTS_FILE_VARIABLE]: skipsFile, [REHEARSAL_COPY_VARIABLE]: path.join(dir, "rehearsal-project") },
      log,
    });
    for (const failed of rows.filter((row) => row.outputEnd !== undefined))
      log(`\n=== ${failed.name} ${failed.result}: the end of its output (printed whole above), again\n${failed.outputEnd}`);
    log(["", ...formatTable(rows), "", ...formatSkips(readSkips(skipsFile))].join("\n"));
    if (!ok) {
      const failed = rows.find((row) => row.result.startsWith("FAILED"));
      console.error(`\nnpm test failed at phase ${failed.name}; after a fix, resume with: npm test -- --from ${failed.name}`);
      return 1;
    }
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(PHASES, process.argv.slice(2));
}
