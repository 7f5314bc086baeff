import type { JsonRpcProvider } from "ethers";
import type { Logger } from "pino";

import { decodeOriginData, NATIVE_TOKEN } from "@avn/protocol/intents";
import type { IIntentOriginSettler } from "../../typechain-types/index.ts";
import { describeError } from "../common/describe-error.ts";
import { describeOrder, type Filler } from "./filler.ts";
import type { JournaledOrder, SolverJournal } from "./journal.ts";
import { readOpenedOrders } from "./order-feed.ts";
import { quote, type SolverPolicy } from "./policy.ts";

/** What one direction of the intent layer is made of, for the solver. */
export interface FillLaneOptions {
  /** For logs: "withdrawals" (L2 → L1) or "deposits" (L1 → L2). */
  name: string;
  origin: { provider: JsonRpcProvider; settler: IIntentOriginSettler };
  destination: { provider: JsonRpcProvider };
  /** Sends fills on the destination chain. */
  filler: Filler;
  journal: SolverJournal;
  policy: SolverPolicy;
  /** The origin chain's primary token (an input) and the destination chain's (an output). */
  tokens: { input: string; output: string };
  /** ETH on the destination chain the fills never pay out. */
  gasReserve: bigint;
  /** Wei an order costs the solver in gas on both chains, at current prices (an ETH order's fee must cover it). */
  gasCost(): Promise<bigint>;
  /** The L1 gas price the policy caps. */
  l1GasPrice(): Promise<bigint>;
  firstLookback: number;
  logger: Logger;
  /** Asks the solver for another pass (a fill was mined). */
  wake(): void;
}

/**
 * The filling half of one direction: reads the origin settler's `Open` events into the journal, quotes each order,
 * sends the fills the policy takes on the destination chain, and follows each fill until it is mined. Settlement,
 * which differs between the directions (a storage proof, a reported message), is the solver's.
 */
export class FillLane {
  readonly #options: FillLaneOptions;
  readonly #waiting = new Set<string>();

  constructor(options: FillLaneOptions) {
    this.#options = options;
  }

  get journal(): SolverJournal {
    return this.#options.journal;
  }

  /** Journals new orders, settles where each fill in flight stands, and fills what pays. */
  async pass(): Promise<void> {
    const { origin, journal, logger, name } = this.#options;
    const head = await origin.provider.getBlockNumber();
    const fresh = await readOpenedOrders({
      provider: origin.provider,
      origin: origin.settler,
      journal,
      head,
      firstLookback: this.#options.firstLookback,
    });
    for (const orderId of fresh)
      logger.info(
        { lane: name, orderId, ...describeOrder(decodeOriginData(journal.get(orderId)!.originData as `0x${string}`)) },
        "order seen",
      );
    await this.#resolveFills();
    await this.#fillSeen();
  }

  async #resolveFills(): Promise<void> {
    const { journal, logger, filler, name } = this.#options;
    for (const order of journal.inState("filling")) {
      // One fill the node refuses to take again (its nonce now another's) must not stop the others.
      const outcome = await filler.check(order).catch((error: unknown) => {
        logger.warn(
          { lane: name, orderId: order.orderId, reason: describeError(error) },
          "fill not found nor sent again; the next block tries again",
        );
        return undefined;
      });
      if (outcome === undefined) continue;
      if (outcome.kind === "filled") {
        journal.filled(order.orderId, outcome.block);
        logger.info({ lane: name, orderId: order.orderId, fillTx: order.fillHash, fillBlock: outcome.block }, "order filled");
      } else if (outcome.kind === "taken") {
        journal.skip(order.orderId, outcome.reason);
        logger.info({ lane: name, orderId: order.orderId, reason: outcome.reason }, "order left");
      } else this.#awaitFill(order);
    }
  }

  async #fillSeen(): Promise<void> {
    const { journal, logger, destination, policy, filler, tokens, name } = this.#options;
    const seen = journal.inState("seen");
    if (seen.length === 0) return;
    const [head, l1GasPrice, gasCost, inventory] = await Promise.all([
      destination.provider.getBlock("latest"),
      this.#options.l1GasPrice(),
      this.#options.gasCost(),
      filler.inventory(tokens.output),
    ]);
    const now = head!.timestamp;
    for (const order of seen) {
      const terms = decodeOriginData(order.originData as `0x${string}`);
      if (terms.fillDeadline < now) {
        journal.expire(order.orderId, "its fill deadline passed");
        continue;
      }
      const decision = quote(terms, { now, l1GasPrice, inventory, tokens, gasCost, gasReserve: this.#options.gasReserve }, policy);
      if (!decision.fill) {
        if (decision.retry === true) logger.debug({ lane: name, orderId: order.orderId, reason: decision.reason }, "order not filled yet");
        else {
          journal.skip(order.orderId, decision.reason);
          logger.info({ lane: name, orderId: order.orderId, reason: decision.reason }, "order declined");
        }
        continue;
      }
      try {
        const hash = await filler.send(order);
        if (terms.outputToken === NATIVE_TOKEN) inventory.eth -= terms.outputAmount;
        else inventory.token -= terms.outputAmount;
        logger.info({ lane: name, orderId: order.orderId, fillTx: hash, fee: decision.fee.toString() }, "fill sent");
        this.#awaitFill(journal.get(order.orderId)!);
      } catch (error) {
        this.#fillRefused(order, error);
      }
    }
  }

  /** A fill refused before it was signed (the estimate) or at its broadcast: said, and tried again next block unless final. */
  #fillRefused(order: JournaledOrder, error: unknown): void {
    const { journal, logger, name } = this.#options;
    const reason = describeError(error);
    const current = journal.get(order.orderId)!;
    if (current.state === "seen" && /AlreadyFilled/.test(reason)) {
      journal.skip(order.orderId, "filled by another filler");
      logger.info({ lane: name, orderId: order.orderId }, "order left: filled by another filler");
    } else if (current.state === "seen" && /FillExpired/.test(reason)) journal.expire(order.orderId, "its fill deadline passed");
    else logger.warn({ lane: name, orderId: order.orderId, reason }, "fill not sent; the next block tries again");
  }

  /** Wakes a pass when a journaled fill is mined (once per fill and process). */
  #awaitFill(order: JournaledOrder): void {
    if (this.#waiting.has(order.orderId)) return;
    this.#waiting.add(order.orderId);
    this.#options.filler
      .waitMined(order.fillHash!)
      .catch(() => undefined)
      .finally(() => {
        this.#waiting.delete(order.orderId);
        this.#options.wake();
      });
  }
}
