/**
 * How long an API process's start waits for Redis. A process started during an outage (a crashed worker
 * replaced, a host restarted) must start degraded, not wait for Redis: node-redis's first connection retries
 * forever.
 */
export const CONNECT_WAIT_MS = 2_000;

/**
 * Connects `client`, waiting at most `waitMs` for it, and says whether it is connected: past that it goes
 * on connecting in the background (node-redis retries on its own) and its commands fail at once meanwhile
 * (no offline queue). A connection refused for a reason no retry can change (a malformed URL) fails now.
 */
export async function connectWithin(client: { connect(): Promise<unknown> }, waitMs: number): Promise<boolean> {
  const connecting = client.connect();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
  try {
    return await Promise.race([connecting.then(() => true as const), waited]);
  } finally {
    clearTimeout(timer);
    // Settled later (connected, or given up by a close): nothing to report there.
    connecting.catch(() => undefined);
  }
}
