import { watch } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";

import { spawnScript, type ScriptProcess } from "../../../src/devnet/script-process.ts";
import { Supervisor, SupervisionEndedError, type SupervisedExit, type SupervisorOptions } from "../../../src/devnet/supervisor.ts";

/**
 * The supervisor over real processes: tiny scripts of a throwaway project, run by `spawnScript` as the stack runs
 * `scripts/node.ts` and `scripts/solver.ts`. Each appends its pid to `RUNS_FILE` once it runs, so a restart is seen to
 * have run, not only to have been spawned.
 */
describe("devnet: the process supervisor", function () {
  this.timeout(30_000);
  let projectRoot: string;
  let runsFile: string;
  const supervisors: Array<Supervisor<ScriptProcess>> = [];

  const SCRIPTS = {
    // Runs until a signal ends it (a SIGTERM too: no handler, so it dies of it).
    forever: `import { appendFileSync } from "node:fs";\nappendFileSync(process.env.RUNS_FILE, process.pid + "\\n");\nsetInterval(() => {}, 1 << 30);\n`,
    // Fails at once, after its line: a crash loop.
    fails: `import { appendFileSync } from "node:fs";\nappendFileSync(process.env.RUNS_FILE, process.pid + "\\n");\nprocess.exit(1);\n`,
    // Ends cleanly at once, as a service does after a SIGTERM someone sent it.
    clean: `import { appendFileSync } from "node:fs";\nappendFileSync(process.env.RUNS_FILE, process.pid + "\\n");\nprocess.exit(0);\n`,
  };

  before(async function () {
    projectRoot = await mkdtemp(path.join(tmpdir(), "avn-supervisor-"));
    await mkdir(path.join(projectRoot, "scripts"));
    for (const [name, source] of Object.entries(SCRIPTS)) await writeFile(path.join(projectRoot, "scripts", `${name}.mjs`), source);
  });

  beforeEach(async function () {
    runsFile = path.join(projectRoot, `runs-${this.currentTest?.title.replace(/\W+/g, "-")}.txt`);
    await writeFile(runsFile, "");
  });

  afterEach(async function () {
    await Promise.all(supervisors.splice(0).map((supervisor) => supervisor.stop("SIGKILL")));
  });

  after(async function () {
    await rm(projectRoot, { recursive: true, force: true });
  });

  /** A supervisor over `script`, recording its exits and counting its starts. */
  async function supervise(script: keyof typeof SCRIPTS, options: Partial<SupervisorOptions<ScriptProcess>> = {}) {
    const exits: Array<SupervisedExit<ScriptProcess>> = [];
    const restarts: Array<{ pid: number | undefined; automatic: boolean }> = [];
    let starts = 0;
    let exitSeen: (exit: SupervisedExit<ScriptProcess>) => void = () => undefined;
    const supervisor = await Supervisor.start<ScriptProcess>({
      start: async () => {
        starts += 1;
        return await spawnScript({ projectRoot, script: `${script}.mjs`, env: { RUNS_FILE: runsFile } });
      },
      ...options,
      onExit: (exit) => {
        exits.push(exit);
        exitSeen(exit);
      },
      onRestart: async (process, event) => {
        restarts.push({ pid: process.child.pid, automatic: event.automatic });
        await options.onRestart?.(process, event);
      },
    });
    supervisors.push(supervisor);
    return {
      supervisor,
      exits,
      restarts,
      starts: () => starts,
      /** Resolves at the next exit the supervisor reports (one it did not ask for). */
      nextExit: () => new Promise<SupervisedExit<ScriptProcess>>((resolve) => (exitSeen = resolve)),
    };
  }

  /** The pids the runs wrote, in order. */
  async function runs(): Promise<number[]> {
    return (await readFile(runsFile, "utf8"))
      .split("\n")
      .filter((line) => line.length > 0)
      .map(Number);
  }

  /** What `promise` rejects with (handled from now on: call it as soon as the promise exists). */
  async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
    return await promise.then(
      () => expect.fail("expected a rejection"),
      (error: unknown) => error,
    );
  }

  /**
   * Waits until the process's script has run (its pid is in the runs file): a kill then ends a run, not a spawn. The
   * file is read again at each change the file system reports (fs.watch) and at the process's exit, and once right
   * after the watch starts, so that a line written before it is not missed.
   */
  async function running(process: ScriptProcess): Promise<void> {
    const { child } = process;
    const pid = child.pid!;
    const watching = new AbortController();
    let onExit: (() => void) | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const check = async () => {
          // Whether it had exited before the read: a script that wrote its line and then exited has run.
          const exited = child.exitCode !== null || child.signalCode !== null;
          if ((await runs()).includes(pid)) return resolve();
          if (exited) reject(new Error(`process ${pid} exited`));
        };
        watch(runsFile, { signal: watching.signal }, () => void check().catch(reject)).on("error", reject);
        onExit = () => void check().catch(reject);
        child.once("exit", onExit);
        void check().catch(reject);
      });
    } finally {
      watching.abort();
      if (onExit !== undefined) child.off("exit", onExit);
    }
  }

  it("restarts a process killed with SIGKILL, and names the new one current", async function () {
    const { supervisor, exits, restarts, starts } = await supervise("forever", { backoff: { initialMs: 10 } });
    const first = supervisor.current;
    await running(first);
    const restarted = supervisor.restarted();
    first.child.kill("SIGKILL");
    const second = await restarted;

    expect(second).to.equal(supervisor.current);
    expect(second.child.pid).to.not.equal(first.child.pid);
    expect(supervisor.restarts).to.equal(1);
    expect(starts()).to.equal(2);
    expect(exits.map(({ code, signal, restartInMs }) => ({ code, signal, restartInMs }))).to.deep.equal([
      { code: null, signal: "SIGKILL", restartInMs: 10 },
    ]);
    expect(restarts).to.deep.equal([{ pid: second.child.pid, automatic: true }]);
    await running(second);
    expect(await runs()).to.deep.equal([first.child.pid, second.child.pid]);
    expect(second.child.exitCode).to.equal(null);
    expect(supervisor.supervising).to.equal(true);
  });

  it("restarts a process that fails with exit code 1, again and again", async function () {
    const { supervisor, exits } = await supervise("fails", { backoff: { initialMs: 5, maxMs: 20 } });
    while (supervisor.restarts < 3) await supervisor.restarted();
    const pids = await runs();
    expect(pids.length).to.be.at.least(3); // the three that exited ran (the fourth may not have yet)
    expect(new Set(pids).size).to.equal(pids.length);
    expect(exits.slice(0, 3).map(({ code, signal }) => ({ code, signal }))).to.deep.equal(Array(3).fill({ code: 1, signal: null }));
  });

  it("doubles the wait between crashes after short runs up to its maximum, and starts over after a long enough run", async function () {
    let clock = 0;
    const { supervisor, exits } = await supervise("forever", {
      backoff: { initialMs: 20, maxMs: 80, resetAfterMs: 60_000 },
      now: () => clock,
    });
    const waited: number[] = [];
    const crash = async () => {
      const restarted = supervisor.restarted();
      const killedAt = performance.now();
      supervisor.current.child.kill("SIGKILL");
      await restarted;
      waited.push(performance.now() - killedAt);
    };
    for (let crashes = 0; crashes < 5; crashes++) await crash();
    clock += 60_000; // this run lasts a minute by the supervisor's clock
    await crash();
    await crash();

    expect(exits.map((exit) => exit.restartInMs)).to.deep.equal([20, 40, 80, 80, 80, 20, 40]);
    expect(exits.map((exit) => exit.ranMs)).to.deep.equal([0, 0, 0, 0, 0, 60_000, 0]);
    // The waits were kept (a timer may fire a millisecond early by its rounding).
    for (const [index, exit] of exits.entries()) expect(waited[index], `restart ${index + 1}`).to.be.at.least(exit.restartInMs! - 1);
    expect(supervisor.restarts).to.equal(7);
  });

  it("cancels a restart waiting for its backoff when stopped, without waiting for it", async function () {
    const { supervisor, nextExit, starts } = await supervise("forever", { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const first = supervisor.current;
    const ended = rejectionOf(supervisor.restarted());
    const exited = nextExit();
    first.child.kill("SIGKILL");
    expect((await exited).restartInMs).to.equal(60_000);
    const stoppingAt = performance.now();
    await supervisor.stop();
    expect(performance.now() - stoppingAt).to.be.below(10_000);

    const error = await ended;
    expect(error).to.be.instanceOf(SupervisionEndedError);
    expect((error as SupervisionEndedError).reason).to.equal("stopped");
    expect(supervisor.current).to.equal(first);
    expect(supervisor.supervising).to.equal(false);
    expect(supervisor.restarts).to.equal(0);
    expect(starts()).to.equal(1);
  });

  it("never restarts once stopped during the backoff: another supervisor's later restart of the same backoff is the proof", async function () {
    const stopped = await supervise("forever", { backoff: { initialMs: 50 } });
    const witness = await supervise("forever", { backoff: { initialMs: 50 } });
    const exited = stopped.nextExit();
    stopped.supervisor.current.child.kill("SIGKILL");
    await exited; // its restart is scheduled now
    const stopping = stopped.supervisor.stop();
    // The witness's restart is scheduled after the stopped one's would have been, for as long: once it ran, the
    // stopped one's would have too.
    const witnessed = witness.supervisor.restarted();
    witness.supervisor.current.child.kill("SIGKILL");
    await witnessed;
    await stopping;

    expect(stopped.starts()).to.equal(1);
    expect(stopped.supervisor.restarts).to.equal(0);
    expect(stopped.restarts).to.deep.equal([]);
    expect(witness.supervisor.restarts).to.equal(1);
  });

  it("never restarts a process it stopped, whatever the signal", async function () {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      const { supervisor, exits, starts } = await supervise("forever", { backoff: { initialMs: 1 } });
      const process = supervisor.current;
      const ended = rejectionOf(supervisor.restarted());
      await supervisor.stop(signal);

      // The exit was seen (stop() resolves after the supervisor's own exit handler ran) and not taken for a crash,
      // though a death by a signal is one by default.
      expect(process.child.signalCode).to.equal(signal);
      expect(exits).to.deep.equal([]);
      expect(((await ended) as SupervisionEndedError).reason).to.equal("stopped");
      expect(((await rejectionOf(supervisor.restarted())) as SupervisionEndedError).code).to.equal("SUPERVISION_ENDED");
      expect(starts()).to.equal(1);
      expect(supervisor.restarts).to.equal(0);
    }
  });

  it("leaves a process that exited cleanly (code 0) stopped", async function () {
    const { supervisor, nextExit, starts } = await supervise("clean");
    const ended = rejectionOf(supervisor.restarted());
    const exit = await nextExit();

    expect([exit.code, exit.signal, exit.restartInMs]).to.deep.equal([0, null, undefined]);
    expect(((await ended) as SupervisionEndedError).reason).to.equal("exited cleanly");
    expect(supervisor.supervising).to.equal(false);
    expect(starts()).to.equal(1);
    expect(await runs()).to.deep.equal([supervisor.current.child.pid]);
  });

  it("restarts on purpose through restart(): not counted, not awaited by restarted(), and supervised again after a stop", async function () {
    const { supervisor, restarts } = await supervise("forever", { backoff: { initialMs: 1 } });
    const first = supervisor.current;
    const automatic = supervisor.restarted();
    const second = await supervisor.restart();
    expect(first.child.signalCode).to.equal("SIGTERM");
    expect(second).to.equal(supervisor.current);
    expect(supervisor.restarts).to.equal(0);
    expect(restarts).to.deep.equal([{ pid: second.child.pid, automatic: false }]);

    // The pending restarted() waits for an automatic restart: the crash's, not restart()'s.
    second.child.kill("SIGKILL");
    const third = await automatic;
    expect(third.child.pid).to.not.equal(second.child.pid);
    expect(supervisor.restarts).to.equal(1);

    // After stop(), restart() brings it back under supervision.
    await supervisor.stop();
    const fourth = await supervisor.restart();
    expect(supervisor.supervising).to.equal(true);
    const fifth = supervisor.restarted();
    fourth.child.kill("SIGKILL");
    expect((await fifth).child.pid).to.not.equal(fourth.child.pid);
    expect(supervisor.restarts).to.equal(2);
  });

  it("tries a failed start again after the next backoff", async function () {
    const errors: Array<{ message: string; retryInMs: number | undefined }> = [];
    let failNext = false;
    const { supervisor } = await supervise("forever", {
      backoff: { initialMs: 5 },
      start: async () => {
        if (failNext) {
          failNext = false;
          throw new Error("could not spawn");
        }
        return await spawnScript({ projectRoot, script: "forever.mjs", env: { RUNS_FILE: runsFile } });
      },
      onError: (error, retryInMs) => errors.push({ message: (error as Error).message, retryInMs }),
    });
    failNext = true;
    const restarted = supervisor.restarted();
    supervisor.current.child.kill("SIGKILL");
    const next = await restarted;

    expect(errors).to.deep.equal([{ message: "could not spawn", retryInMs: 10 }]);
    expect(next).to.equal(supervisor.current);
    expect(supervisor.restarts).to.equal(1);
  });
});
