import { PollingLoop } from "../../common/polling-loop.ts";

/** What the devnet's background services (deposit relay, output proposer, L1 attributes) are told about their loop. */
export interface BackgroundServiceOptions {
  /** Time between passes; default 500 ms, so devnet deposits and withdrawals move within a second. */
  pollIntervalMs?: number;
  /** Told of each failed pass; the next pass runs at the next tick anyway (a devnet service never gives up). */
  onError?: (error: unknown) => void;
}

const DEFAULT_POLL_INTERVAL_MS = 500;

/**
 * The lifecycle the devnet's background services share around `PollingLoop`: `start()` runs
 * `pass` every poll interval in the background until `stop()`, which lets a pass in progress finish
 * early (it is given `isStopping`) and waits for it; a failed pass goes to `onError` and is retried at
 * the next tick; `runPass()` runs one pass now, or joins the one running, so passes never overlap.
 */
export abstract class BackgroundService<T> {
  readonly #loop: PollingLoop<T>;
  /** Callers of `nextPass`, told by the first pass that starts after their call. */
  readonly #passWaiters: Array<{ resolve: (result: T) => void; reject: (error: unknown) => void }> = [];

  protected constructor(options: BackgroundServiceOptions) {
    this.#loop = new PollingLoop(
      (isStopping) => this.#observedPass(isStopping),
      options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
      options.onError,
    );
  }

  /**
   * Resolves with what the first pass to start after this call returns, a pass of the loop or of
   * `runPass()` (rejects if that pass fails). What a caller awaits to know that the service has looked at
   * the chains since a given moment (a restarted service has run once), instead of waiting for its interval.
   */
  nextPass(): Promise<T> {
    return new Promise<T>((resolve, reject) => this.#passWaiters.push({ resolve, reject }));
  }

  /** One pass of the service's work; stops early, leaving nothing half done, once `isStopping()`. */
  protected abstract pass(isStopping: () => boolean): Promise<T>;

  /** Starts the passes in the background until `stop()`. */
  start(): void {
    this.#loop.start();
  }

  /** Asks the pass in progress to finish early, waits for it, and runs no more. */
  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /**
   * Runs the next pass at once instead of at the next tick (after the pass in progress, if any): for a
   * service that learns of new work from an event, such as a `newHeads` subscription.
   */
  protected wake(): void {
    this.#loop.wake();
  }

  /** One pass now, or the one already running; runs to the end even after `stop()`. */
  protected runPass(): Promise<T> {
    return this.#loop.runOnce();
  }

  /** A pass, telling the `nextPass` callers who were waiting when it started. */
  async #observedPass(isStopping: () => boolean): Promise<T> {
    const waiters = this.#passWaiters.splice(0);
    try {
      const result = await this.pass(isStopping);
      for (const waiter of waiters) waiter.resolve(result);
      return result;
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
      throw error;
    }
  }
}
