import type { JsonRpcProvider } from "ethers";

import type { IIntentOriginSettler } from "../../typechain-types/index.ts";
import type { SolverJournal } from "./journal.ts";

/** `eth_getLogs` ranges stay under what hosted RPCs accept. */
const MAX_LOG_RANGE = 2_000;

/**
 * Reads `Open` events of the origin settler from the journal's cursor up to `head`, journals each order once (its
 * id and its `originData`, as the event gives them) and moves the cursor, range by range, so that a restart goes on
 * from the last range read. The first run starts `firstLookback` blocks back (of the origin chain). Returns the orders new to the journal.
 */
export async function readOpenedOrders(options: {
  /** The origin chain. */
  provider: JsonRpcProvider;
  origin: IIntentOriginSettler;
  journal: SolverJournal;
  head: number;
  firstLookback: number;
}): Promise<string[]> {
  const { origin, journal, head } = options;
  const fresh: string[] = [];
  let from = (journal.cursor() ?? Math.max(0, head - options.firstLookback) - 1) + 1;
  while (from <= head) {
    const to = Math.min(head, from + MAX_LOG_RANGE - 1);
    const events = await origin.queryFilter(origin.filters.Open(), from, to);
    for (const event of events) {
      const originData = event.args.resolvedOrder.fillInstructions[0].originData;
      if (journal.addSeen({ orderId: event.args.orderId, originData, openBlock: event.blockNumber })) fresh.push(event.args.orderId);
    }
    journal.setCursor(to);
    from = to + 1;
  }
  return fresh;
}
