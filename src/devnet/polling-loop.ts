/**
 * Runs `pass` again and again, `intervalMs` apart, until stopped: the shape of the devnet's background
 * services (deposit relay, output proposer). A failed pass is reported and retried on the next tick.
 * `stop()` asks the pass in progress to finish early (it is given `isStopping`) and waits for it, so
 * nothing is left half done.
 */
export class PollingLoop {
  readonly #pass: (isStopping: () => boolean) => Promise<unknown>;
  readonly #intervalMs: number;
  readonly #onError: ((error: unknown) => void) | undefined;
  #running: Promise<void> | undefined;
  #stopRequested = false;
  #wake: (() => void) | undefined;

  constructor(pass: (isStopping: () => boolean) => Promise<unknown>, intervalMs: number, onError?: (error: unknown) => void) {
    this.#pass = pass;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  start(): void {
    if (this.#running !== undefined) return;
    this.#stopRequested = false;
    this.#running = this.#run();
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
        await this.#pass(isStopping);
      } catch (error) {
        this.#onError?.(error);
      }
      if (this.#stopRequested) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#intervalMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}
