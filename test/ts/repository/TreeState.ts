import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

const script = path.resolve(import.meta.dirname, "..", "..", "..", "scripts", "tree-state.mjs");

/** `npm test`'s working-tree check, run in a git repository of its own. */
describe("npm test's check that the tests leave the working tree unchanged", function () {
  let repo: string;
  const run = (command: string) => spawnSync(process.execPath, [script, command], { cwd: repo, encoding: "utf8" });

  beforeEach(async function () {
    repo = await mkdtemp(path.join(tmpdir(), "tree-state-"));
    execFileSync("git", ["init", "-q"], { cwd: repo });
    await writeFile(path.join(repo, "tracked.txt"), "one");
    await writeFile(path.join(repo, ".gitignore"), "ignored/\nnode_modules/\n");
    execFileSync("git", ["add", "."], { cwd: repo });
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"], { cwd: repo });
  });
  afterEach(async function () {
    await rm(repo, { recursive: true, force: true });
  });

  it("passes when only ignored files appeared, and names every added or changed file otherwise", async function () {
    await writeFile(path.join(repo, "tracked.txt"), "changed before the run"); // a developer's own edit
    expect(run("save").status).to.equal(0);
    await writeFile(path.join(repo, "ignored-not.txt"), "left by a test");
    await writeFile(path.join(repo, "tracked.txt"), "changed again by a test");
    const failed = run("check");
    expect(failed.status).to.equal(1);
    expect(failed.stderr).to.contain("ignored-not.txt (added)");
    expect(failed.stderr).to.contain("tracked.txt (changed)");

    await rm(path.join(repo, "ignored-not.txt"));
    await writeFile(path.join(repo, "tracked.txt"), "changed before the run");
    await mkdir(path.join(repo, "ignored"));
    await writeFile(path.join(repo, "ignored", "x.txt"), "build output");
    const passed = run("check");
    expect(passed.status, passed.stderr).to.equal(0);
  });
});
