import type { ApiKeyStore } from "./key-store.ts";

/** How often the store is asked whether any key was revoked (by this process or another one). */
export const REVOCATION_POLL_MS = 250;
/** Live keys remembered at most; past it the cache starts over (the store answers the rest). */
const MAX_CACHED_KEYS = 10_000;

/**
 * The key check of the request path without a hash and a database query per request: a live key,
 * once verified against the store, is remembered in memory (the key itself is in this process's memory
 * anyway, as the request's header). Unknown keys are never remembered, so a new key works at once and
 * guessing fills nothing. Revocation is the one change that must reach a cached key: every
 * `REVOCATION_POLL_MS` the store's revocation stamp (a cheap indexed read, shared by every process on
 * the same database) is compared with the last one, and any change clears the cache, so a key revoked
 * anywhere stops working everywhere within that interval plus one request.
 */
export class CachedKeyVerifier {
  readonly #store: ApiKeyStore;
  readonly #live = new Map<string, string>();
  #stamp: string;
  readonly #timer: NodeJS.Timeout;

  constructor(store: ApiKeyStore, pollMs = REVOCATION_POLL_MS) {
    this.#store = store;
    this.#stamp = store.revocationStamp();
    this.#timer = setInterval(() => this.#checkRevocations(), pollMs);
    this.#timer.unref();
  }

  /** The id of the live key `key`, or undefined for an unknown or revoked one. */
  verify(key: string): string | undefined {
    const cached = this.#live.get(key);
    if (cached !== undefined) return cached;
    const id = this.#store.verify(key);
    if (id !== undefined) {
      if (this.#live.size >= MAX_CACHED_KEYS) this.#live.clear();
      this.#live.set(key, id);
    }
    return id;
  }

  #checkRevocations(): void {
    const stamp = this.#store.revocationStamp();
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    this.#live.clear();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#live.clear();
  }
}
