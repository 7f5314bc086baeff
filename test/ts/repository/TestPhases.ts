import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { expect } from "chai";

import { isCi, MissingServiceError, requireService, type RequiredService, type SkippableContext } from "../../helpers/services.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
const runner = pathToFileURL(path.join(projectRoot, "scripts", "test-phases.mjs")).href;
const services = pathToFileURL(path.join(projectRoot, "test", "helpers", "services.ts")).href;

const THING: RequiredService = { name: "thing-server", missing: "not installed", install: "apt-get install thing" };
const GADGET: RequiredService = { name: "gadget", missing: "not installed at /usr/bin/gadget", install: "apt-get install gadget" };

/** What mocha's `this.skip()` throws, for a fake context. */
class Skipped extends Error {}

/** A fake mocha `this`: in a test titled `title`, or in a `before` hook of a suite of `suiteTests` tests. */
function fakeContext(title: string, suiteTests?: number): SkippableContext & { skipped: number } {
  const parent = { fullTitle: () => `suite ${title}`, total: () => suiteTests ?? 1 };
  return {
    skipped: 0,
    skip(): never {
      this.skipped += 1;
      throw new Skipped();
    },
    test:
      suiteTests === undefined
        ? { type: "test", title, fullTitle: () => `suite ${title}`, parent }
        : { type: "hook", title: '"before all" hook', fullTitle: () => `suite ${title} "before all" hook`, parent },
  };
}

/** The environment without CI's variable: these tests run under CI=true in CI, and check both cases. */
function envWithoutCi(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.CI;
  return env;
}

/**
 * Whether a phase's shell command runs a Hardhat build in this project: a `hardhat` command without
 * `--no-compile` (every Hardhat task that runs code builds first), directly or through a root npm script.
 * Workspaces' scripts (`-w`) run in their own folders and are not Hardhat projects.
 */
function runsHardhatBuild(command: string, scripts: Record<string, string>): boolean {
  return command.split(/&&|\|\||;/).some((segment) => {
    const words = segment.trim().split(/\s+/);
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words.shift(); // VARIABLE=value prefixes
    const [program, ...args] = words[0] === "npx" ? words.slice(1) : words;
    if (program === "hardhat") return !args.includes("--no-compile");
    if (program === "npm" && args[0] === "run" && !args.includes("-w") && scripts[args[1]] !== undefined) {
      return runsHardhatBuild(scripts[args[1]], scripts);
    }
    return false;
  });
}

describe("npm test's runner (scripts/test-phases.mjs) and the missing-service helper", function () {
  this.timeout(60_000);
  let dir: string;
  /** A phase that runs `code` on this Node. */
  const node = (code: string) => `"${process.execPath}" -e ${JSON.stringify(code)}`;

  /** Runs the runner's `main` on `phases` (JavaScript source of the list) with `args`, in a process of its own. */
  const runPhases = async (phases: string, args: string[] = []) => {
    const driver = path.join(dir, "driver.mjs");
    await writeFile(
      driver,
      `import { main } from ${JSON.stringify(runner)};\nprocess.exitCode = await main(${phases}, process.argv.slice(2));\n`,
    );
    const result = spawnSync(process.execPath, [driver, ...args], { cwd: dir, env: envWithoutCi(), encoding: "utf8" });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, output: `${result.stdout}\n${result.stderr}` };
  };
  /** The table's row for `phase`, split into its columns. */
  const row = (stdout: string, phase: string) =>
    stdout
      .split("\n")
      .find((line) => line.startsWith(`${phase} `))
      ?.split(/\s{2,}/);

  beforeEach(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "test-phases-"));
  });
  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it("runs every phase in order, passing its output through, and prints the table, a skipped phase saying why", async function () {
    const { status, stdout, output } = await runPhases(`[
      { name: "first", command: ${JSON.stringify(node("console.log('FIRST OUTPUT')"))} },
      { name: "web", command: ${JSON.stringify(node("console.log('WEB RAN')"))}, skipWhen: () => "apps/web has no \\"test\\" script" },
      { name: "second", command: ${JSON.stringify(node("setTimeout(() => console.log('SECOND OUTPUT'), 300)"))} },
    ]`);
    expect(status, output).to.equal(0);
    expect(stdout.indexOf("FIRST OUTPUT")).to.be.within(0, stdout.indexOf("SECOND OUTPUT"));
    expect(stdout).to.not.contain("WEB RAN");
    const table = stdout.slice(stdout.lastIndexOf("SECOND OUTPUT"));
    expect(table).to.match(/^phase\s+seconds\s+result$/m);
    expect(row(table, "first")?.[2]).to.equal("passed");
    expect(row(table, "web")).to.deep.equal(["web", "-", 'skipped: apps/web has no "test" script']);
    const [, seconds, result] = row(table, "second")!;
    expect(result).to.equal("passed");
    expect(Number(seconds)).to.be.within(0.3, 30);
    expect(Number(row(table, "total")?.[1])).to.be.at.least(Number(seconds));
    expect(table).to.match(/^no tests skipped$/m);
  });

  it("stops at a failing phase, prints the table and exits non-zero, naming the phase to resume from", async function () {
    const { status, stdout, stderr, output } = await runPhases(`[
      { name: "first", command: ${JSON.stringify(node("console.log('FIRST OUTPUT')"))} },
      { name: "broken", command: ${JSON.stringify(node("console.error('BROKEN OUTPUT'); process.exit(3)"))} },
      { name: "after", command: ${JSON.stringify(node("console.log('AFTER OUTPUT')"))} },
    ]`);
    expect(status, output).to.equal(1);
    expect(stderr).to.contain("BROKEN OUTPUT");
    expect(stdout).to.not.contain("AFTER OUTPUT");
    expect(row(stdout, "first")?.[2]).to.equal("passed");
    expect(row(stdout, "broken")?.[2]).to.equal("FAILED (exit 3)");
    expect(row(stdout, "after")).to.deep.equal(["after", "-", "not run"]);
    expect(stderr).to.contain("npm test -- --from broken");
  });

  it("runs adjacent phases of one `together` group at the same time, each one's output printed whole, and stops after a group with a failure", async function () {
    // Each phase prints a line, waits, prints another: side by side, the group takes about as long as the longer,
    // not both. "right" waits 1.5 s and leaves a mark as it ends; "left" ends once it sees that mark, so it ends last.
    const mark = path.join(dir, "right-ended");
    const right = node(
      `console.log('RIGHT BEGINS'); setTimeout(() => { console.log('RIGHT ENDS'); require('fs').writeFileSync(${JSON.stringify(mark)}, ''); process.exit(4); }, 1500)`,
    );
    const left = node(
      `const fs = require('fs'); console.log('LEFT BEGINS'); const end = () => { console.log('LEFT ENDS'); process.exit(0); }; ` +
        `fs.watch(${JSON.stringify(dir)}, () => { if (fs.existsSync(${JSON.stringify(mark)})) end(); }); ` +
        `if (fs.existsSync(${JSON.stringify(mark)})) end();`,
    );
    const { status, stdout, output } = await runPhases(`[
      { name: "left", command: ${JSON.stringify(left)}, together: "checks" },
      { name: "right", command: ${JSON.stringify(right)}, together: "checks" },
      { name: "after", command: ${JSON.stringify(node("console.log('AFTER OUTPUT')"))} },
    ]`);
    expect(status, output).to.equal(1);
    for (const tag of ["LEFT", "RIGHT"]) {
      // Held back and printed whole: a phase's two lines are adjacent.
      // (The phase's header names its command, which holds the same words: the lines alone are looked for.)
      expect(stdout).to.contain(`\n${tag} BEGINS\n${tag} ENDS\n`);
    }
    expect(stdout).to.not.contain("AFTER OUTPUT");
    expect(row(stdout, "left")?.[2]).to.equal("passed");
    expect(row(stdout, "right")?.[2]).to.equal("FAILED (exit 4)");
    expect(row(stdout, "after")).to.deep.equal(["after", "-", "not run"]);
    const total = Number(row(stdout, "total")?.[1]);
    expect(total).to.be.below(Number(row(stdout, "left")?.[1]) + Number(row(stdout, "right")?.[1]));
    // The failed phase ended first, and the other's output came after its own: its end is printed again, last
    // before the table, where a log's excerpt finds it.
    const again = stdout.indexOf("=== right FAILED (exit 4): the end of its output");
    expect(again, stdout).to.be.above(stdout.indexOf("LEFT ENDS"));
    expect(stdout.slice(again)).to.match(/^RIGHT BEGINS\nRIGHT ENDS\n\nphase\s+seconds\s+result$/m);
    expect(stdout.slice(again)).to.not.contain("LEFT");
  });

  it("runs the phases of one lane of a group one after another, and a phase after those it names, beside the others; a failure stops what waits for it", async function () {
    // Each phase appends "<name> begins" and "<name> ends" to a file, 1 s apart: the order tells what overlapped.
    const mark = (name: string, exit = 0) =>
      node(
        `const fs = require('fs'); const f = ${JSON.stringify(path.join(dir, "order.txt"))}; fs.appendFileSync(f, '${name} begins\\n'); ` +
          `setTimeout(() => { fs.appendFileSync(f, '${name} ends\\n'); process.exit(${exit}); }, 1000)`,
      );
    const { status, stdout, output } = await runPhases(`[
      { name: "first", command: ${JSON.stringify(mark("first"))}, together: "g", lane: "chain" },
      { name: "second", command: ${JSON.stringify(mark("second", 5))}, together: "g", lane: "chain" },
      { name: "third", command: ${JSON.stringify(mark("third"))}, together: "g", lane: "chain" },
      { name: "beside", command: ${JSON.stringify(mark("beside"))}, together: "g" },
      { name: "waiter", command: ${JSON.stringify(mark("waiter"))}, together: "g", after: ["first"] },
      { name: "blocked", command: ${JSON.stringify(mark("blocked"))}, together: "g", after: ["beside", "second"] },
    ]`);
    expect(status, output).to.equal(1);
    const order = (await readFile(path.join(dir, "order.txt"), "utf8")).trim().split("\n");
    // The lane's second begins once its first has ended; the phase beside it overlaps the first.
    expect(order.indexOf("second begins")).to.be.above(order.indexOf("first ends"));
    expect(order.indexOf("beside begins")).to.be.below(order.indexOf("first ends"));
    expect(order).to.not.include("third begins");
    // A phase after another of a lane begins once that one ended, beside the lane's next; one after a failure never.
    expect(order.indexOf("waiter begins")).to.be.above(order.indexOf("first ends")).and.below(order.indexOf("second ends"));
    expect(order).to.not.include("blocked begins");
    expect(row(stdout, "second")?.[2]).to.equal("FAILED (exit 5)");
    expect(row(stdout, "third")).to.deep.equal(["third", "-", "not run"]);
    expect(row(stdout, "beside")?.[2]).to.equal("passed");
    expect(row(stdout, "waiter")?.[2]).to.equal("passed");
    expect(row(stdout, "blocked")).to.deep.equal(["blocked", "-", "not run"]);
  });

  it("resumes with --from, running the phases marked always first, and refuses an unknown phase", async function () {
    const phases = `[
      { name: "save", command: ${JSON.stringify(node("console.log('SAVE RAN')"))}, always: true },
      { name: "early", command: ${JSON.stringify(node("console.log('EARLY RAN')"))} },
      { name: "late", command: ${JSON.stringify(node("console.log('LATE RAN')"))} },
    ]`;
    const resumed = await runPhases(phases, ["--from", "late"]);
    expect(resumed.status, resumed.output).to.equal(0);
    expect(resumed.stdout).to.contain("SAVE RAN").and.contain("LATE RAN").and.not.contain("EARLY RAN");
    expect(row(resumed.stdout, "early")).to.deep.equal(["early", "-", "not run (--from late)"]);
    const unknown = await runPhases(phases, ["--from", "lat"]);
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.contain('No phase named "lat"').and.contain("save, early, late");
    expect(unknown.stdout).to.not.contain("SAVE RAN");
  });

  it("sums up the skips the helper recorded during the phases, by missing service, with each test", async function () {
    // A phase that skips as a test file would: one suite of 3 tests in a before hook, two single tests.
    const skipper = path.join(dir, "skipper.ts");
    await writeFile(
      skipper,
      `import { requireService } from ${JSON.stringify(services)};
const context = (title: string, suiteTests?: number) => ({
  skip(): never { throw new Error("skipped"); },
  test: suiteTests === undefined
    ? { type: "test", title, fullTitle: () => title }
    : { type: "hook", title: "before all", fullTitle: () => title + " before all", parent: { fullTitle: () => title, total: () => suiteTests } },
});
const skip = (title: string, service: { name: string; missing: string; install: string }, suiteTests?: number) => {
  try { requireService(context(title, suiteTests), service); } catch { /* skipped */ }
};
skip("browser suite", ${JSON.stringify(GADGET)}, 3);
skip("redis test one", ${JSON.stringify(THING)});
skip("redis test two", ${JSON.stringify(THING)});
console.log("RECORD FILE " + process.env.AVN_SKIPPED_TESTS_FILE);
`,
    );
    const { status, stdout, output } = await runPhases(
      `[{ name: "tests", command: ${JSON.stringify(`"${process.execPath}" "${skipper}"`)} }]`,
    );
    expect(status, output).to.equal(0);
    const summary = stdout.slice(stdout.lastIndexOf("total"));
    expect(summary).to.contain(
      "5 tests skipped: 3 × gadget not installed at /usr/bin/gadget (apt-get install gadget); 2 × thing-server not installed (apt-get install thing)",
    );
    expect(summary).to.contain("  browser suite (3 tests): needs gadget\n");
    expect(summary).to.contain("  redis test one: needs thing-server\n");
    // The record lived in a temporary file of the run's own, removed at its end.
    const recordFile = /^RECORD FILE (.+)$/m.exec(stdout)?.[1];
    expect(recordFile)
      .to.be.a("string")
      .and.satisfy((file: string) => file.startsWith(tmpdir()));
    expect(existsSync(recordFile!)).to.equal(false);
  });

  it("requireService: under CI=true throws naming what to install, without skipping or recording", async function () {
    const file = path.join(dir, "skips.jsonl");
    for (const value of ["true", "1", "yes"]) {
      const context = fakeContext("needs a thing");
      const call = () => requireService(context, THING, { CI: value, AVN_SKIPPED_TESTS_FILE: file });
      expect(call).to.throw(MissingServiceError, "thing-server not installed: under CI (CI=true) a test that needs it fails");
      expect(call).to.throw(/Install it: apt-get install thing\. \(suite needs a thing\)/);
      expect(context.skipped).to.equal(0);
    }
    expect(existsSync(file)).to.equal(false);
  });

  it("requireService: outside CI skips the test and records it, a before hook's skip counting its suite's tests", async function () {
    const file = path.join(dir, "skips.jsonl");
    const inTest = fakeContext("needs a thing");
    expect(() => requireService(inTest, THING, { AVN_SKIPPED_TESTS_FILE: file })).to.throw(Skipped);
    const inHook = fakeContext("needs a gadget", 4);
    expect(() => requireService(inHook, GADGET, { CI: "false", AVN_SKIPPED_TESTS_FILE: file })).to.throw(Skipped);
    expect([inTest.skipped, inHook.skipped]).to.deep.equal([1, 1]);
    const records = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records).to.deep.equal([
      { title: "suite needs a thing", tests: 1, ...THING },
      { title: "suite needs a gadget", tests: 4, ...GADGET },
    ]);
    // Without the runner's file the skip is still made (and said), just not recorded.
    expect(() => requireService(fakeContext("alone"), THING, {})).to.throw(Skipped);
  });

  it("splits the mocha test files between its four processes: every file in exactly one, the named folders whole", async function () {
    const { mochaFiles, NETWORK_TEST_FOLDERS, REHEARSAL_TEST_FOLDERS, QOS_TEST_FOLDERS, PHASES } = (await import(runner)) as {
      mochaFiles: (half: string, testsDir?: string) => string[];
      NETWORK_TEST_FOLDERS: string[];
      REHEARSAL_TEST_FOLDERS: string[];
      QOS_TEST_FOLDERS: string[];
      PHASES: Array<{ name: string; command: string; together?: string; lane?: string; after?: string[] }>;
    };
    const dir = await mkdtemp(path.join(tmpdir(), "avn-mocha-files-"));
    try {
      for (const file of [
        "web/A.ts",
        "web/helpers/b.ts",
        "bridge/C.ts",
        "api/D.ts",
        "api/webhooks/H.ts",
        "devnet/RpcParity.ts",
        "devnet/RpcParityNotes.ts",
        "e2e/E.ts",
        "web.ts",
        "notes.md",
        "rehearsal/F.ts",
        "qos/G.ts",
      ]) {
        await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
        await writeFile(path.join(dir, file), "");
      }
      // A named subfolder goes whole with its process, a named file alone; the rest of their parent folder
      // stays in "services", a file whose name merely begins like a named one too.
      expect(mochaFiles("network", dir)).to.deep.equal([
        "test/ts/api/webhooks/H.ts",
        "test/ts/bridge/C.ts",
        "test/ts/devnet/RpcParity.ts",
        "test/ts/web/A.ts",
        "test/ts/web/helpers/b.ts",
      ]);
      expect(mochaFiles("services", dir)).to.deep.equal([
        "test/ts/api/D.ts",
        "test/ts/devnet/RpcParityNotes.ts",
        "test/ts/e2e/E.ts",
        "test/ts/web.ts",
      ]);
      expect(mochaFiles("rehearsal", dir)).to.deep.equal(["test/ts/rehearsal/F.ts"]);
      expect(mochaFiles("qos", dir)).to.deep.equal(["test/ts/qos/G.ts"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // On this repository: the processes partition test/ts, each named folder or file exists, all four run in one group
    // (the rehearsal and the quality-of-service network one after the other, in one lane).
    const network = mochaFiles("network");
    const services = mochaFiles("services");
    const rehearsal = mochaFiles("rehearsal");
    const qos = mochaFiles("qos");
    const all = (await readdir(path.join(projectRoot, "test", "ts"), { recursive: true })).filter((file) => file.endsWith(".ts"));
    expect([...network, ...services, ...rehearsal, ...qos].sort()).to.deep.equal(
      all.map((file) => `test/ts/${file.split(path.sep).join("/")}`).sort(),
    );
    for (const [files, folders] of [
      [network, NETWORK_TEST_FOLDERS],
      [rehearsal, REHEARSAL_TEST_FOLDERS],
      [qos, QOS_TEST_FOLDERS],
    ])
      for (const entry of folders)
        expect(
          files.some((file) => file === `test/ts/${entry}` || file.startsWith(`test/ts/${entry}/`)),
          entry,
        ).to.equal(true);
    const phases = PHASES.filter((phase) => phase.name.startsWith("test:mocha"));
    // All once the instrumented build and the checks beside it are done; the rehearsal, then the QoS network, in one lane.
    const after = ["lint", "typecheck", "coverage:clear"];
    expect(phases.map((phase) => [phase.name, phase.together, phase.lane, phase.after])).to.deep.equal([
      ["test:mocha:network", "tests", undefined, after],
      ["test:mocha:services", "tests", undefined, after],
      ["test:mocha:rehearsal", "tests", "own-devnets", after],
      ["test:mocha:qos", "tests", "own-devnets", undefined],
    ]);
    const buildLane = PHASES.filter((phase) => phase.together === "tests" && phase.lane === "solidity").map((phase) => phase.name);
    expect(buildLane.slice(-2)).to.deep.equal(["build:coverage", "coverage:clear"]);
    expect(phases[0].command).to.contain(" test/ts/web/WebApp.ts").and.not.contain("test/ts/e2e/");
    expect(phases[1].command).to.contain(" test/ts/e2e/VerificationNetwork.ts").and.not.contain("test/ts/web/");
    expect(phases[2].command).to.contain(" test/ts/rehearsal/Rehearsal.ts").and.not.contain("test/ts/e2e/").and.not.contain("--coverage");
    expect(phases[3].command).to.contain(" test/ts/qos/QosNetwork.ts").and.contain("--coverage").and.not.contain("test/ts/e2e/");
    // The rehearsal's copy is made in the build's lane, after the plain build and before the coverage build.
    const names = PHASES.map((phase) => phase.name);
    const copy = PHASES.find((phase) => phase.name === "rehearsal:copy");
    expect(copy?.lane).to.equal("build");
    expect(names.indexOf("rehearsal:copy")).to.be.greaterThan(names.indexOf("build")).and.lessThan(names.indexOf("build:coverage"));
  });

  it("runs no Hardhat build in two lanes of one group: the mocha processes run with --no-compile", async function () {
    const { PHASES } = (await import(runner)) as {
      PHASES: Array<{ name: string; command: string; together?: string; lane?: string }>;
    };
    const { scripts } = JSON.parse(await readFile(path.join(projectRoot, "package.json"), "utf8")) as { scripts: Record<string, string> };
    // The classifier on the shapes the phases use, so that the check below cannot pass by reading nothing.
    expect(runsHardhatBuild("hardhat build --coverage --no-typechain --quiet", scripts)).to.equal(true);
    expect(runsHardhatBuild("hardhat test solidity", scripts)).to.equal(true);
    expect(runsHardhatBuild("npm run build", scripts)).to.equal(true);
    expect(runsHardhatBuild("npm run test:gas", scripts)).to.equal(true);
    expect(runsHardhatBuild("AVN_X=1 hardhat test mocha --coverage test/ts/a.ts", scripts)).to.equal(true);
    expect(runsHardhatBuild("AVN_X=1 hardhat test mocha --no-compile --coverage test/ts/a.ts", scripts)).to.equal(false);
    expect(runsHardhatBuild("npm run lint", scripts)).to.equal(false);
    expect(runsHardhatBuild("node scripts/check-coverage.ts", scripts)).to.equal(false);
    // Every build saves Hardhat's compile cache through one temporary file and rewrites typechain-types/: two
    // lanes of a group building at once race (ENOENT on the cache's rename, seen in CI). One lane may build.
    const groups = new Map<string, Map<string, string[]>>();
    for (const [index, phase] of PHASES.entries()) {
      if (phase.together === undefined || !runsHardhatBuild(phase.command, scripts)) continue;
      const lanes = groups.get(phase.together) ?? new Map<string, string[]>();
      const lane = phase.lane ?? `#${index}`;
      lanes.set(lane, [...(lanes.get(lane) ?? []), phase.name]);
      groups.set(phase.together, lanes);
    }
    for (const [group, lanes] of groups) expect([...lanes.values()], `group "${group}": lanes that build`).to.have.lengthOf(1);
    const mocha = PHASES.filter((phase) => phase.name.startsWith("test:mocha"));
    expect(mocha.map((phase) => phase.name)).to.include.members([
      "test:mocha:network",
      "test:mocha:services",
      "test:mocha:rehearsal",
      "test:mocha:qos",
    ]);
    for (const phase of mocha) expect(runsHardhatBuild(phase.command, scripts), phase.name).to.equal(false);
    // The coverage they collect is reported once, after them.
    const names = PHASES.map((phase) => phase.name);
    expect(names.indexOf("coverage:report"))
      .to.be.greaterThan(names.indexOf("test:mocha:qos"))
      .and.lessThan(names.indexOf("check-coverage"));
  });

  it("collect-only coverage hooks: under the variable, neither the clearing at a run's start nor its report runs", async function () {
    const { default: factory, COLLECT_ONLY_VARIABLE } = await import("../../../src/tooling/coverage/collect-only.ts");
    const hooks = await factory();
    const calls: string[] = [];
    const next = (name: string) => async (_context: unknown, id: string) => void calls.push(`${name} ${id}`);
    const context = {} as Parameters<NonNullable<typeof hooks.onTestRunStart>>[0];
    const previous = process.env[COLLECT_ONLY_VARIABLE];
    try {
      process.env[COLLECT_ONLY_VARIABLE] = "1";
      await hooks.onTestRunStart!(context, "mocha", next("start"));
      await hooks.onTestRunDone!(context, "mocha", next("done"));
      expect(calls).to.deep.equal([]);
      delete process.env[COLLECT_ONLY_VARIABLE];
      await hooks.onTestRunStart!(context, "mocha", next("start"));
      await hooks.onTestRunDone!(context, "mocha", next("done"));
      expect(calls).to.deep.equal(["start mocha", "done mocha"]);
      // The data file each process saves at its worker's end is Hardhat's own handler, left in place.
      expect(hooks.onTestWorkerDone).to.equal(undefined);
    } finally {
      if (previous === undefined) delete process.env[COLLECT_ONLY_VARIABLE];
      else process.env[COLLECT_ONLY_VARIABLE] = previous;
    }
  });

  it("isCi: CI set to anything but empty, 0 or false", function () {
    expect([undefined, "", "0", "false", "FALSE", "true", "1", "woodpecker"].map((CI) => isCi({ CI }))).to.deep.equal([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});
