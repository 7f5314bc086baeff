import type { ChildProcess } from "node:child_process";
import path from "node:path";

import { AvnError } from "@avn/protocol/errors";

/** What a supervisor runs: a child process, its exit, and a stop (`ScriptProcess`, `CircuitNodeProcess`). */
export interface SupervisableProcess {
  child: ChildProcess;
  /** Resolves with the exit code (null when a signal ended it) once the process has exited. */
  exited: Promise<number | null>;
  /** Sends `signal` unless it has exited; resolves once it has. */
  stop(signal?: NodeJS.Signals): Promise<unknown>;
}

/**
 * The wait before a restart: `initialMs` after the first crash, doubling with each crash that follows a short run,
 * up to `maxMs`; a run of at least `resetAfterMs` puts it back to `initialMs`.
 */
export interface RestartBackoff {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

/** 1 s, doubling to 30 s; back to 1 s after a minute's run (a crash loop costs a process a minute at most, in the end). */
export const DEFAULT_RESTART_BACKOFF: RestartBackoff = { initialMs: 1_000, maxMs: 30_000, resetAfterMs: 60_000 };

/** How one supervised process ended, as `onExit` is told. */
export interface SupervisedExit<P> {
  process: P;
  code: number | null;
  /** The signal that ended it, if one did. */
  signal: NodeJS.Signals | null;
  /** How long it ran (by the supervisor's clock). */
  ranMs: number;
  /** The wait before the restart; absent when it exited cleanly and is not restarted. */
  restartInMs?: number;
}

export interface SupervisorOptions<P extends SupervisableProcess> {
  /** Starts the process (the first one, unless `initial` is given, and each restart). */
  start: () => Promise<P>;
  /** A process already started, supervised as the first run. */
  initial?: P;
  backoff?: Partial<RestartBackoff>;
  /**
   * Whether an exit the supervisor did not ask for is a crash, to be restarted. By default an exit with a code other
   * than 0, or by a signal: the project's services exit 0 only when a signal asked them to stop (`scripts/node.ts`,
   * `scripts/solver.ts`), as systemd's `Restart=on-failure` reads it.
   */
  isFailure?: (code: number | null, signal: NodeJS.Signals | null) => boolean;
  /** The clock that measures runs, in ms (default `performance.now`; tests inject one). */
  now?: () => number;
  /** Each exit the supervisor did not ask for, before any restart. */
  onExit?: (exit: SupervisedExit<P>) => void;
  /**
   * Each new process, once started, before `restarted()` resolves: `automatic` for a restart after a crash (counted in
   * `restarts`), not for one asked through `restart()`. A throw goes to `onError`.
   */
  onRestart?: (process: P, event: { automatic: boolean; restarts: number }) => void | Promise<void>;
  /** A start that failed (tried again after `retryInMs`), or a throw of `onRestart` (no `retryInMs`). */
  onError?: (error: unknown, retryInMs?: number) => void;
}

/** Why `restarted()` will not resolve: the supervisor was stopped, or the process exited cleanly. */
export class SupervisionEndedError extends AvnError<"SUPERVISION_ENDED"> {
  constructor(readonly reason: "stopped" | "exited cleanly") {
    super("SUPERVISION_ENDED", `the process is no longer supervised: ${reason === "stopped" ? "it was stopped" : "it exited cleanly"}`);
    this.name = "SupervisionEndedError";
  }
}

/**
 * Keeps one process running: restarts it after a crash (an exit it was not asked for; see `isFailure`) once the
 * backoff has passed. `stop()` ends the supervision at once (a restart waiting for its backoff is cancelled, never
 * awaited); `restart()` replaces the process on purpose and resumes the supervision.
 */
export class Supervisor<P extends SupervisableProcess> {
  readonly #options: SupervisorOptions<P>;
  readonly #backoff: RestartBackoff;
  readonly #now: () => number;
  #current: P;
  #restarts = 0;
  /** Crashes in a row after short runs: the next wait is `initialMs * 2^#failures`, capped. */
  #failures = 0;
  #supervising = true;
  /** Why the supervision ended, while it has. */
  #ended: SupervisionEndedError["reason"] = "stopped";
  /** Bumped by every run, stop and restart: an exit or a timer of an older generation is ignored. */
  #generation = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The automatic restart's start in flight, if any (a stop or restart stops what it yields). */
  #starting: Promise<P> | undefined;
  #waiters: Array<{ resolve: (process: P) => void; reject: (error: Error) => void }> = [];
  /** `stop()` and `restart()` run one after the other. */
  #operations: Promise<unknown> = Promise.resolve();

  private constructor(options: SupervisorOptions<P>, first: P) {
    this.#options = options;
    this.#backoff = { ...DEFAULT_RESTART_BACKOFF, ...options.backoff };
    this.#now = options.now ?? (() => performance.now());
    this.#current = first;
    this.#watch(first);
  }

  /** Starts supervising `options.initial`, or a process `options.start()` starts (a failure of that first start throws). */
  static async start<P extends SupervisableProcess>(options: SupervisorOptions<P>): Promise<Supervisor<P>> {
    return new Supervisor(options, options.initial ?? (await options.start()));
  }

  /** The process of the latest run (it may have exited, while a restart waits). */
  get current(): P {
    return this.#current;
  }

  /** Automatic restarts so far (not those asked through `restart()`). */
  get restarts(): number {
    return this.#restarts;
  }

  /** False once stopped, or once the process exited cleanly. */
  get supervising(): boolean {
    return this.#supervising;
  }

  /**
   * Resolves with the process of the next automatic restart, once started and `onRestart` has run; rejects with
   * `SupervisionEndedError` if the supervision ends first (or has ended).
   */
  restarted(): Promise<P> {
    if (!this.#supervising) return Promise.reject(new SupervisionEndedError(this.#ended));
    return new Promise<P>((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /**
   * Stops the process with `signal` (default SIGTERM) and ends the supervision: no restart follows, one waiting for its
   * backoff is cancelled. Resolves once the process (and one being started at that moment) has exited.
   */
  stop(signal?: NodeJS.Signals): Promise<void> {
    this.#end("stopped");
    return this.#serialize(async () => {
      this.#end("stopped"); // again, after a restart() that ran in between
      await this.#stopProcesses(signal);
    });
  }

  /**
   * Stops the process with `signal` (default SIGTERM), starts a new one and supervises it (also after `stop()` or a
   * clean exit); not counted in `restarts`, and it resets the backoff. Throws what a failed start throws, the
   * supervision then ended.
   */
  restart(signal?: NodeJS.Signals): Promise<P> {
    this.#interrupt();
    return this.#serialize(async () => {
      this.#interrupt();
      await this.#stopProcesses(signal);
      let next: P;
      try {
        next = await this.#options.start();
      } catch (error) {
        this.#end("stopped");
        throw error;
      }
      this.#supervising = true;
      this.#failures = 0;
      this.#current = next;
      this.#watch(next);
      await this.#announce(next, false);
      return next;
    });
  }

  #serialize<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#operations.then(operation);
    this.#operations = result.catch(() => undefined);
    return result;
  }

  /** Ends the supervision: nothing is restarted any more, and `restarted()` rejects. */
  #end(reason: SupervisionEndedError["reason"]): void {
    this.#supervising = false;
    this.#ended = reason;
    this.#interrupt();
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(new SupervisionEndedError(reason));
  }

  /** Disowns the current run's exit and any restart pending or starting (whoever calls this stops what those yield). */
  #interrupt(): void {
    this.#generation += 1;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops the current process, and the one an automatic restart was starting when it was interrupted. */
  async #stopProcesses(signal: NodeJS.Signals | undefined): Promise<void> {
    const starting = this.#starting;
    this.#starting = undefined;
    await Promise.all([
      starting?.then(
        (process) => process.stop(signal),
        () => undefined,
      ),
      this.#current.stop(signal),
    ]);
  }

  #watch(process: P): void {
    this.#generation += 1;
    const generation = this.#generation;
    const startedAt = this.#now();
    void process.exited.then((code) => this.#exited(generation, process, code, this.#now() - startedAt));
  }

  #exited(generation: number, process: P, code: number | null, ranMs: number): void {
    if (generation !== this.#generation || !this.#supervising) return; // asked for, or already replaced
    const signal = process.child.signalCode;
    const isFailure = this.#options.isFailure ?? ((exitCode, exitSignal) => exitCode !== 0 || exitSignal !== null);
    if (!isFailure(code, signal)) {
      this.#options.onExit?.({ process, code, signal, ranMs });
      this.#end("exited cleanly");
      return;
    }
    if (ranMs >= this.#backoff.resetAfterMs) this.#failures = 0;
    const restartInMs = this.#nextDelay();
    this.#options.onExit?.({ process, code, signal, ranMs, restartInMs });
    this.#schedule(generation, restartInMs);
  }

  #nextDelay(): number {
    const delay = Math.min(this.#backoff.initialMs * 2 ** this.#failures, this.#backoff.maxMs);
    this.#failures += 1;
    return delay;
  }

  /** A policy delay, not a synchronization: `stop()` and `restart()` clear it and never wait for it. */
  #schedule(generation: number, delayMs: number): void {
    this.#timer = setTimeout(() => void this.#relaunch(generation), delayMs);
  }

  async #relaunch(generation: number): Promise<void> {
    this.#timer = undefined;
    if (generation !== this.#generation || !this.#supervising) return;
    const starting = this.#options.start();
    this.#starting = starting;
    let next: P;
    try {
      next = await starting;
    } catch (error) {
      if (this.#starting === starting) this.#starting = undefined;
      if (generation !== this.#generation || !this.#supervising) return;
      const retryInMs = this.#nextDelay();
      this.#options.onError?.(error, retryInMs);
      this.#schedule(generation, retryInMs);
      return;
    }
    // A stop or restart took over meanwhile: `#starting` stays set for it, and it stops `next`.
    if (generation !== this.#generation || !this.#supervising) return;
    this.#starting = undefined;
    this.#restarts += 1;
    this.#current = next;
    this.#watch(next);
    await this.#announce(next, true);
  }

  async #announce(process: P, automatic: boolean): Promise<void> {
    try {
      await this.#options.onRestart?.(process, { automatic, restarts: this.#restarts });
    } catch (error) {
      this.#options.onError?.(error);
    }
    if (!automatic) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.resolve(process);
  }
}

/**
 * The line the stack prints when a supervised process (`what`: "Circuit node-3", "The solver") exited without being
 * asked to: restarted after a crash, or left stopped after a clean exit (a SIGINT or SIGTERM someone sent it).
 */
export function describeExit(what: string, exit: SupervisedExit<unknown>, logFile: string): string {
  const how = `${exit.signal === null ? `exited with code ${exit.code}` : `killed by ${exit.signal}`} after ${formatSeconds(exit.ranMs)}`;
  const log = path.relative(process.cwd(), logFile);
  return exit.restartInMs === undefined
    ? `${what} ${how}, stopped by a signal the stack did not send; not restarting it. Its log: ${log}`
    : `${what} crashed (${how}); restarting it in ${formatSeconds(exit.restartInMs)}. Its log: ${log}`;
}

/** `ms` for people: tenths of a second below 10 s, whole seconds above. */
export function formatSeconds(ms: number): string {
  return `${ms < 10_000 ? (ms / 1_000).toFixed(1) : Math.round(ms / 1_000)} s`;
}
