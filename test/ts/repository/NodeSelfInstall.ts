import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { copyFile, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { requireService, type RequiredService } from "../../helpers/services.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/** What this suite runs npm on, as a machine that has not installed the project's Node yet has it. */
const OLD_NODE: RequiredService = {
  name: "a Node older than 22.18",
  missing: "not found on PATH, in /usr/bin or under ~/.nvm",
  install: "apt-get install nodejs (Debian's Node 18 or 20, what a fresh machine has)",
};
const hooks = JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")).scripts as Record<string, string>;

/** `node -p process.versions.node` of a binary, or undefined when it does not run. */
function versionOf(binary: string): string | undefined {
  const result = spawnSync(binary, ["-p", "process.versions.node"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", NODE_OPTIONS: "" },
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

const isRecentEnough = (version: string) => {
  const [major, minor] = version.split(".").map(Number);
  return major > 22 || (major === 22 && minor >= 18);
};

/**
 * A Node older than 22.18 on this machine that runs npm (a fresh machine's own Node 20; on one where Node 22
 * was installed globally, the older one is often still in /usr/bin), or undefined.
 */
function findOldNode(): string | undefined {
  const candidates = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((entry) => entry !== "" && !/node_modules[\\/]\.bin[\\/]?$/.test(entry))
    .concat(["/usr/bin", "/bin", "/usr/local/bin"])
    .map((dir) => path.join(dir, "node"));
  const nvm = path.join(homedir(), ".nvm", "versions", "node");
  if (existsSync(nvm)) candidates.push(...readdirSync(nvm).map((version) => path.join(nvm, version, "bin", "node")));
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (seen.has(real)) continue;
    seen.add(real);
    const version = versionOf(real);
    if (version !== undefined && Number(version.split(".")[0]) >= 18 && !isRecentEnough(version)) return real;
  }
  return undefined;
}

/**
 * `npm start`'s and `npm test`'s first step (scripts/ensure-deps.mjs with scripts/local-node.mjs, as the
 * package.json hooks call them) in a project of its own, with npm itself running on an old Node. The
 * project-local Node is laid in .node/ beforehand (this test's own Node, linked as npm would link the
 * registry's binary package), so nothing is downloaded; the download itself runs in CI (.ci/run).
 */
describe("npm start and npm test on a machine whose Node is older than 22.18", function () {
  this.timeout(60_000);
  let oldNode: string | undefined;
  let dir: string;
  let systemBin: string; // holds `node`: the "system Node" first on PATH

  /** npm in the project, with `node` on PATH being systemBin's (npm's environment of this run removed). */
  const npm = (...args: string[]) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!/^npm_/i.test(key) && key !== "INIT_CWD" && key !== "NODE_OPTIONS") env[key] = value;
    }
    const outerPath = (process.env.PATH ?? "").split(path.delimiter).filter((entry) => !/node_modules[\\/]\.bin[\\/]?$/.test(entry));
    env.PATH = [systemBin, ...outerPath].join(path.delimiter);
    Object.assign(env, {
      npm_config_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    });
    const result = spawnSync("npm", args, { cwd: dir, env, encoding: "utf8" });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.status, output).to.equal(0);
    return { stdout: result.stdout, output };
  };
  /** `npm test`: its test script says which Node it runs on. */
  const npmTest = () => {
    const { stdout, output } = npm("test");
    const ranOn = /^RAN ON (\S+) (.+)$/m.exec(stdout);
    expect(ranOn, output).to.not.equal(null);
    return { output, version: ranOn![1], execPath: ranOn![2] };
  };
  const useSystemNode = async (binary: string) => {
    await rm(path.join(systemBin, "node"), { force: true });
    await symlink(binary, path.join(systemBin, "node"));
  };
  const link = () => path.join(dir, "node_modules", ".bin", "node");
  const installRecord = async () => JSON.parse(await readFile(path.join(dir, "node_modules", ".installed-with-node.json"), "utf8"));

  before(function () {
    oldNode = findOldNode();
    // CI's fresh machine has one (its own Node 20): there this suite must run.
    if (oldNode === undefined) requireService(this, OLD_NODE);
  });

  beforeEach(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "node-self-install-"));
    systemBin = path.join(dir, "system-bin");
    await mkdir(systemBin);
    await mkdir(path.join(dir, "scripts"));
    for (const script of ["ensure-deps.mjs", "local-node.mjs"]) {
      await copyFile(path.join(projectRoot, "scripts", script), path.join(dir, "scripts", script));
    }
    // Two local packages, one of them like Hardhat's native EDR: an optional dependency that needs Node
    // 22, which npm silently skips when it runs on an older Node.
    for (const [name, extra] of [
      ["plain", {}],
      ["needs22", { engines: { node: ">=22.18" } }],
    ] as const) {
      await mkdir(path.join(dir, name));
      await writeFile(path.join(dir, name, "package.json"), JSON.stringify({ name, version: "1.0.0", ...extra }));
    }
    const root = {
      name: "self-install-check",
      version: "1.0.0",
      dependencies: { plain: "file:plain" },
      optionalDependencies: { needs22: "file:needs22" },
    };
    const pkg = {
      ...root,
      private: true,
      scripts: {
        pretest: hooks.pretest,
        postinstall: hooks.postinstall,
        test: `node -e "console.log('RAN ON', process.versions.node, process.execPath)"`,
      },
    };
    await writeFile(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
    const packages = {
      "": root,
      plain: { version: "1.0.0" },
      needs22: { version: "1.0.0", optional: true, engines: { node: ">=22.18" } },
      "node_modules/plain": { resolved: "plain", link: true },
      "node_modules/needs22": { resolved: "needs22", link: true },
    };
    await writeFile(
      path.join(dir, "package-lock.json"),
      JSON.stringify({ ...root, lockfileVersion: 3, requires: true, packages }, null, 2),
    );
  });
  afterEach(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  /** .node/ as scripts/local-node.mjs leaves it, with this test's Node (22.18+) as the binary. */
  const layLocalNode = async () => {
    await mkdir(path.join(dir, ".node", "node_modules", ".bin"), { recursive: true });
    await symlink(process.execPath, path.join(dir, ".node", "node_modules", ".bin", "node"));
  };

  it("installs the dependencies on the project's Node and runs every npm script on it, the system Node unchanged", async function () {
    expect(hooks.prestart).to.equal(hooks.pretest);
    await layLocalNode();
    await useSystemNode(oldNode!);

    const first = npmTest();
    expect(first.output).to.contain("npm ci: no node_modules");
    expect(first.version).to.equal(process.versions.node);
    expect(realpathSync(first.execPath)).to.equal(realpathSync(process.execPath));
    // npm ci itself ran on the project's Node: on the old one it skips the package that needs Node 22.
    expect(existsSync(path.join(dir, "node_modules", "needs22", "package.json"))).to.equal(true);
    expect((await installRecord()).node).to.equal(process.versions.node);
    expect(realpathSync(link())).to.equal(realpathSync(process.execPath));

    // The next run finds everything in place (the link on npm's PATH does not hide the old system Node).
    const second = npmTest();
    expect(second.output).to.not.contain("Installing the locked dependencies");
    expect(second.version).to.equal(process.versions.node);
    expect(versionOf(path.join(systemBin, "node"))).to.equal(versionOf(oldNode!));
  });

  it("reinstalls, on the project's Node, the dependencies that `npm ci` run by hand on the old Node left incomplete", async function () {
    await layLocalNode();
    await useSystemNode(oldNode!);
    npm("ci");
    expect(existsSync(path.join(dir, "node_modules", "plain"))).to.equal(true);
    expect(existsSync(path.join(dir, "node_modules", "needs22"))).to.equal(false);

    const run = npmTest();
    expect(run.output).to.contain(`npm ci: node_modules installed by npm on Node v${versionOf(oldNode!)}`);
    expect(existsSync(path.join(dir, "node_modules", "needs22", "package.json"))).to.equal(true);
    expect(run.version).to.equal(process.versions.node);
  });

  it("with a system Node of 22.18 or newer, fetches nothing and runs the scripts on the system Node", async function () {
    await useSystemNode(oldNode!);
    await layLocalNode();
    npmTest(); // leaves the link in node_modules/.bin
    await rm(path.join(dir, ".node"), { recursive: true });
    await useSystemNode(process.execPath);

    const run = npmTest(); // offline: a download would fail it
    expect(run.output).to.not.contain("installing this project's own Node");
    expect(run.output).to.not.contain("Installing the locked dependencies");
    expect(run.version).to.equal(process.versions.node);
    expect(existsSync(path.join(dir, ".node"))).to.equal(false);
    expect(existsSync(link()) || (await isSymlink(link()))).to.equal(false);
  });
});

const isSymlink = (file: string) =>
  lstat(file).then(
    (stats) => stats.isSymbolicLink(),
    () => false,
  );
