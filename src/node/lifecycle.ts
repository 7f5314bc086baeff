import { AvnError } from "@avn/protocol/errors";
/** Thrown by `startNode` when its signal asked it to stop before it was running. */
export class StopRequested extends AvnError<"STOP_REQUESTED"> {
  constructor() {
    super("STOP_REQUESTED", "stopped before the node was running");
    this.name = "StopRequested";
  }
}

// Start-up retries: 1 s, doubling, up to this, so a long outage is retried every 30 s rather than
// crash-looping the container.
const FIRST_RETRY_DELAY_MS = 1_000;
const MAX_RETRY_DELAY_MS = 30_000;

/** The delay before try `attempt` + 1 (1-based) of a start-up step. */
export function backoffDelay(attempt: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** (attempt - 1));
}

/**
 * What a starting node owns and how it stops: a stack of clean-ups run in reverse order (the last thing
 * started stops first, so the job loop stops before the sender it uses, and the sender before the
 * journal), and the stop signal, which cuts every wait short. A stop during start-up runs the clean-ups
 * and throws `StopRequested`, so `startNode` never returns a half-started node.
 */
export class Lifecycle {
  readonly #signal: AbortSignal | undefined;
  readonly #cleanups: Array<() => Promise<void> | void> = [];
  #stopping: Promise<void> | undefined;

  constructor(signal: AbortSignal | undefined) {
    this.#signal = signal;
  }

  /** Registers what to undo at stop, after everything registered later. */
  onStop(cleanup: () => Promise<void> | void): void {
    this.#cleanups.push(cleanup);
  }

  /** Runs the clean-ups once; later calls wait for that one run. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (const cleanup of this.#cleanups.splice(0).reverse()) await cleanup();
    })();
    return this.#stopping;
  }

  /** Waits `ms`, or less if the node is asked to stop meanwhile. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }

  /** Resolves with "stopped" once the stop signal fires (never, without a signal). */
  stopped(): Promise<"stopped"> {
    return new Promise((resolve) => {
      if (this.#signal?.aborted) resolve("stopped");
      this.#signal?.addEventListener("abort", () => resolve("stopped"), { once: true });
    });
  }

  /** During start-up: if the node was asked to stop, undoes what started and throws `StopRequested`. */
  async throwIfStopped(): Promise<void> {
    if (this.#signal?.aborted) {
      await this.stop();
      throw new StopRequested();
    }
  }

  /**
   * Runs a start-up step until it succeeds or the node is asked to stop, waiting `backoffDelay` between
   * tries; `onFailure` hears each failure and the delay before the next try.
   */
  async retry<T>(work: () => Promise<T>, onFailure: (error: unknown, delayMs: number) => void): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      await this.throwIfStopped();
      try {
        return await work();
      } catch (error) {
        const delayMs = backoffDelay(attempt);
        onFailure(error, delayMs);
        await this.sleep(delayMs);
      }
    }
  }
}
