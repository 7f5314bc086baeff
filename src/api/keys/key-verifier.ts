import { AvnError } from "@avn/protocol/errors";

import type { ApiKeys, VerifiedKey } from "./api-keys.ts";

/** The key database did not answer a key's check: the request is refused (503), never let through unchecked. */
export class KeyDatabaseUnavailableError extends AvnError<"KEY_DATABASE_UNAVAILABLE"> {
  override name = "KeyDatabaseUnavailableError";

  constructor(options?: { cause?: unknown }) {
    super("KEY_DATABASE_UNAVAILABLE", "the key database did not answer", options);
  }
}

/** How often the store is asked whether any key changed (by this process or another one). */
export const REVISION_POLL_MS = 250;
/** Live keys remembered at most; past it the memory starts over (the store answers the rest). */
const MAX_CACHED_KEYS = 10_000;

/**
 * The key check of the request path without a hash and a database query per request: a live key,
 * once verified against the store, is remembered in memory (the key itself is in this process's memory
 * anyway, as the request's header). Unknown keys are never remembered, so a new key works at once and
 * guessing fills nothing. Revocations and quota changes are the changes that must reach a remembered key:
 * every `REVISION_POLL_MS` the store's revision (one row, shared by every process on the same database)
 * is compared with the last one, and any change forgets every key, so a key revoked anywhere stops
 * working everywhere within that interval plus one request.
 */
export class KeyVerifier {
  readonly #store: Pick<ApiKeys, "verify" | "revision">;
  readonly #live = new Map<string, VerifiedKey>();
  #revision: string | undefined;
  readonly #timer: NodeJS.Timeout;
  #polling = false;
  readonly #onPollError: (error: unknown) => void;
  readonly #onRevision: (revision: string) => void;

  private constructor(
    store: Pick<ApiKeys, "verify" | "revision">,
    revision: string,
    pollMs: number,
    onPollError: (error: unknown) => void,
    onRevision: (revision: string) => void,
  ) {
    this.#store = store;
    this.#revision = revision;
    this.#onPollError = onPollError;
    this.#onRevision = onRevision;
    this.#timer = setInterval(() => void this.#poll(), pollMs);
    this.#timer.unref();
  }

  /**
   * `onRevision` is told each new revision a poll finds, once every remembered key is forgotten: the
   * moment a revocation or quota change made elsewhere has reached this process (tests wait on it).
   */
  static async create(
    store: Pick<ApiKeys, "verify" | "revision">,
    options: { pollMs?: number; onPollError?: (error: unknown) => void; onRevision?: (revision: string) => void } = {},
  ): Promise<KeyVerifier> {
    return new KeyVerifier(
      store,
      await store.revision(),
      options.pollMs ?? REVISION_POLL_MS,
      options.onPollError ?? (() => undefined),
      options.onRevision ?? (() => undefined),
    );
  }

  /** The remembered live key `key`, without asking the store; undefined when not remembered. */
  cached(key: string): VerifiedKey | undefined {
    return this.#live.get(key);
  }

  /** The live key `key`, or undefined for an unknown or revoked one. */
  async verify(key: string): Promise<VerifiedKey | undefined> {
    const cached = this.#live.get(key);
    if (cached !== undefined) return cached;
    const revisionBefore = this.#revision;
    const verified = await this.#store.verify(key).catch((error: unknown) => {
      throw new KeyDatabaseUnavailableError({ cause: error });
    });
    // A change seen while the store was asked may be older than the answer: remember only answers
    // given under the revision that is still current.
    if (verified !== undefined && this.#revision === revisionBefore) {
      if (this.#live.size >= MAX_CACHED_KEYS) this.#live.clear();
      this.#live.set(key, verified);
    }
    return verified;
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const revision = await this.#store.revision();
      if (revision !== this.#revision) {
        this.#revision = revision;
        this.#live.clear();
        this.#onRevision(revision);
      }
    } catch (error) {
      // A store that cannot answer cannot tell of revocations either: forget every key, so requests
      // go to the store (and fail there) rather than live on what may be stale.
      this.#revision = undefined;
      this.#live.clear();
      this.#onPollError(error);
    } finally {
      this.#polling = false;
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#live.clear();
  }
}
