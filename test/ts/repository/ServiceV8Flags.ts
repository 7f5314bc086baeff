import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { STACK_PROCESS_ENV } from "../../../src/chaos/hardhat-run.ts";
import { SERVICE_V8_FLAGS } from "../../../src/common/service-v8-flags.ts";
import { spawnScript } from "../../../src/devnet/script-process.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/** package.json's npm scripts, by name. */
function npmScripts(): Record<string, string> {
  return (JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
}

/** The new space's size (MiB) a fresh Node on `flags` starts with. */
function newSpaceAtStart(flags: readonly string[]): number {
  const result = spawnSync(
    process.execPath,
    [...flags, "-p", "require('node:v8').getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size"],
    { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } },
  );
  expect(result.status, result.stderr).to.equal(0);
  return Number(result.stdout.trim()) / 1_048_576;
}

/** A TypeScript script that prints the names of its process's children, as `/proc` lists them. */
const CHILDREN_PROBE = `import { readdirSync, readFileSync } from "node:fs";
const children: string[] = [];
for (const entry of readdirSync("/proc").filter((name) => /^\\d+$/.test(name))) {
  try {
    const [, name, rest] = /^\\d+ \\((.*)\\) (.*)$/s.exec(readFileSync(\`/proc/\${entry}/stat\`, "utf8"))!;
    if (Number(rest.split(" ")[1]) === process.pid) children.push(name);
  } catch {
    // gone meanwhile
  }
}
console.log(JSON.stringify(children));
`;

/**
 * The children of the process `hardhat run` starts on `CHILDREN_PROBE`, with `env` added to this one's, on a
 * cold tsx cache (a TMPDIR of its own), so that tsx transforms the probe with esbuild's synchronous API.
 */
async function childrenUnderHardhatRun(env: Record<string, string>): Promise<string[]> {
  const folder = await mkdtemp(path.join(tmpdir(), "stack-env-"));
  try {
    const script = path.join(folder, "probe.mts");
    await writeFile(script, CHILDREN_PROBE);
    // Only what `env` names is set: the settings under test are not inherited from this process.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !(name in STACK_PROCESS_ENV)));
    const result = spawnSync(process.execPath, [path.join(projectRoot, "node_modules", ".bin", "hardhat"), "run", "--no-compile", script], {
      cwd: projectRoot,
      encoding: "utf8",
      env: { ...inherited, NODE_OPTIONS: "--disable-warning=ExperimentalWarning", TMPDIR: folder, ...env },
    });
    expect(result.status, result.stderr).to.equal(0);
    return JSON.parse(result.stdout.trim().split("\n").at(-1)!) as string[];
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * A long-running service's young generation is fixed at its full size (src/common/service-v8-flags.ts): the
 * flags are ones this Node takes and acts on, and every way a service starts passes them.
 */
describe("The services' V8 flags", function () {
  it("start a Node with its young generation at full size, where V8 alone starts it small", function () {
    expect(newSpaceAtStart(SERVICE_V8_FLAGS)).to.be.at.least(16);
    expect(newSpaceAtStart([])).to.be.below(16);
  });

  it("are on the node image's command and on the npm scripts that run a service", function () {
    const dockerfile = readFileSync(path.join(projectRoot, "Dockerfile"), "utf8");
    const command = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
    expect(command.slice(0, 1)).to.deep.equal(["node"]);
    expect(command).to.include.members([...SERVICE_V8_FLAGS]);
    const scripts = npmScripts();
    for (const name of ["start", "api", "node", "solver"])
      expect(scripts[name].split(" "), `npm run ${name}`).to.include.members([...SERVICE_V8_FLAGS]);
  });

  it("go with no esbuild worker thread in the stack's process, whose heap they would make grow for hours", async function () {
    // Without the setting, tsx's transform leaves esbuild's worker thread behind, with the service it started.
    expect(await childrenUnderHardhatRun({})).to.include("esbuild");
    expect(await childrenUnderHardhatRun({ ...STACK_PROCESS_ENV })).to.not.include("esbuild");
    // npm start's process runs with it too (npm run chaos and soak pass STACK_PROCESS_ENV).
    const start = npmScripts().start.split(" ");
    for (const [name, value] of Object.entries(STACK_PROCESS_ENV)) expect(start).to.include(`${name}=${value}`);
  });

  it("are on the command line of every script the local stack starts", async function () {
    // Any script does: its arguments are what is checked. `keys` with none says how to use it and exits.
    const folder = await mkdtemp(path.join(tmpdir(), "service-flags-"));
    try {
      const script = await spawnScript({ projectRoot, script: "keys.ts", env: {}, logFile: path.join(folder, "keys.log") });
      await script.exited;
      expect(script.child.spawnargs.slice(1, -1)).to.include.members([...SERVICE_V8_FLAGS]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
