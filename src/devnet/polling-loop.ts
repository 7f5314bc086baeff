/**
 * Runs `pass` again and again, `intervalMs` apart, until stopped: the shape of the devnet's background
 * services (deposit relay, output proposer). A failed pass is reported and retried on the next tick;
 * `stop()` lets the pass in progress finish, so nothing is left half done.
 */
export class PollingLoop {
  #running: Promise<void> | undefined;
  #stopRequested = false;
  #wake: (() => void) | undefined;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError?: (error: unknown) => void,
  ) {}

  /** True from `stop()` on, for passes that check it between steps. */
  get stopRequested(): boolean {
    return this.#stopRequested;
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
    while (!this.#stopRequested) {
      try {
        await this.pass();
      } catch (error) {
        this.onError?.(error);
      }
      if (this.#stopRequested) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.intervalMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}
