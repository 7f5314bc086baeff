/**
 * Runs `pass` again and again, `intervalMs` apart, until stopped: the shape of the devnet's background
 * services (deposit relay, output proposer). A failed pass is reported and retried on the next tick.
 * Passes never overlap: `runOnce()` while a pass is running joins it (two relay passes could both find
 * a deposit missing and send it twice; two proposer passes would post the same output). `stop()` asks
 * the loop's pass in progress to finish early (it is given `isStopping`) and waits for it, so nothing is
 * left half done.
 */
export class PollingLoop<T> {
  readonly #pass: (isStopping: () => boolean) => Promise<T>;
  readonly #intervalMs: number;
  readonly #onError: ((error: unknown) => void) | undefined;
  #running: Promise<void> | undefined;
  #current: Promise<T> | undefined;
  #stopRequested = false;
  #wake: (() => void) | undefined;
  #wakeRequested = false;

  constructor(pass: (isStopping: () => boolean) => Promise<T>, intervalMs: number, onError?: (error: unknown) => void) {
    this.#pass = pass;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  /** One pass now, or the one already running. A direct call runs to the end even after `stop()`. */
  runOnce(isStopping: () => boolean = () => false): Promise<T> {
    this.#current ??= this.#pass(isStopping).finally(() => {
      this.#current = undefined;
    });
    return this.#current;
  }

  start(): void {
    if (this.#running !== undefined) return;
    this.#stopRequested = false;
    this.#running = this.#run();
  }

  /** Runs the next pass now: cuts the wait short, or, during a pass, skips the wait after it. */
  wake(): void {
    this.#wakeRequested = true;
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#stopRequested = true;
    this.#wake?.();
    await this.#running;
    this.#running = undefined;
  }

  async #run(): Promise<void> {
    const isStopping = () => this.#stopRequested;
    while (!this.#stopRequested) {
      try {
        await this.runOnce(isStopping);
      } catch (error) {
        this.#onError?.(error);
      }
      if (this.#stopRequested) break;
      if (this.#wakeRequested) {
        this.#wakeRequested = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#intervalMs);
        this.#wake = () => {
          clearTimeout(timer);
          this.#wakeRequested = false;
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }
}
