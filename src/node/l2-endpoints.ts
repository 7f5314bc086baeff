import { JsonRpcProvider } from "ethers";
import type { Logger } from "pino";

/**
 * The node's L2 RPC URLs. One is used at a time, so that everything a pass or a check reads comes from
 * one node's view of the chain (a lagging second node could return no logs past its head, or miss a
 * receipt); on an error the node moves to the next URL.
 */
export class L2Endpoints {
  readonly #providers: JsonRpcProvider[];
  #current = 0;

  constructor(urls: readonly string[]) {
    // No response cache: the node reads nonces and receipts it has just changed.
    this.#providers = urls.map((url) => new JsonRpcProvider(url, undefined, { cacheTimeout: -1, staticNetwork: true }));
  }

  get current(): JsonRpcProvider {
    return this.#providers[this.#current];
  }

  /** Moves to the next URL; returns its position (1-based), for the log. */
  failover(): number {
    this.#current = (this.#current + 1) % this.#providers.length;
    return this.#current + 1;
  }

  get count(): number {
    return this.#providers.length;
  }

  destroy(): void {
    for (const provider of this.#providers) provider.destroy();
  }
}

/** What every component calls after an L2 error: the next URL, if there is one (logged by position, never by URL). */
export function failoverOnError(endpoints: L2Endpoints, logger: Logger): () => void {
  const log = logger.child({ component: "l2-endpoints" });
  return () => {
    if (endpoints.count > 1) log.warn({ urlPosition: endpoints.failover(), urls: endpoints.count }, "moving to the next L2 RPC URL");
  };
}
