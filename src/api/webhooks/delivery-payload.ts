import type { Subscription } from "./subscription-store.ts";

// JSON.rawJSON (V8 11.4, Node 21+) is not in TypeScript's lib yet.
const json = JSON as unknown as { rawJSON: (text: string) => unknown };

/** A bigint as a JSON number, exactly: `JSON.stringify` writes the digits as they are. */
const exact = (value: bigint) => json.rawJSON(value.toString());

/**
 * A delivery's JSON body (`webhookDeliverySchema` in `@avn/protocol/webhook-wire`), written once when the change
 * is recorded and sent byte for byte on every attempt: balances and the block are exact JSON integers.
 */
export function deliveryPayload(change: {
  id: string;
  subscription: Subscription;
  balance: bigint;
  previousBalance: bigint;
  block: bigint;
  blockHash?: string;
  correction: boolean;
  observedAt: string;
}): string {
  const { subscription } = change;
  return JSON.stringify({
    id: change.id,
    subscriptionId: subscription.id,
    chain: subscription.chain,
    owner: subscription.owner,
    asset: subscription.asset,
    ...(subscription.tokenId === "" ? {} : { token_id: subscription.tokenId }),
    balance: exact(change.balance),
    previousBalance: exact(change.previousBalance),
    block: exact(change.block),
    ...(change.blockHash === undefined ? {} : { blockHash: change.blockHash }),
    ...(change.correction ? { correction: true } : {}),
    observedAt: change.observedAt,
  });
}
