import type { Kysely } from "kysely";

import type { KeyDatabaseSchema } from "../../src/api/keys/database/schema.ts";
import { WebhookService, type WebhookServiceOptions } from "../../src/api/webhooks/webhook-service.ts";
import { JsonRpcPool } from "../../src/chains/rpc/json-rpc-pool.ts";
import { createFailoverTransport } from "../../src/chains/solana/failover-transport.ts";
import type { SourceFixtures } from "../../src/devnet/source-chains.ts";

/**
 * A webhook service on `db` over the local source chains of `sources`, as the tests run it: receivers on this
 * machine allowed, a 50 ms poll, 4 deliveries at once, retries 20 ms to 100 ms apart for an hour, 10
 * subscriptions a key; `options` come over these (`onError` is theirs to say).
 */
export function testWebhookService(
  db: Kysely<KeyDatabaseSchema>,
  sources: SourceFixtures,
  options: Partial<WebhookServiceOptions> & Pick<WebhookServiceOptions, "onError">,
): WebhookService {
  return new WebhookService({
    db,
    evmRpc: new JsonRpcPool({ urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 }),
    solanaTransport: createFailoverTransport({ urls: [sources.solanaRpc.url], timeoutMs: 2_000 }),
    maxPerKey: 10,
    allowPrivate: true,
    pollMs: 50,
    concurrency: 4,
    retry: { baseDelayMs: 20, maxDelayMs: 100, windowMs: 3_600_000 },
    ...options,
  });
}
