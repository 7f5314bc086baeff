import { parseEther, type Provider, ZeroAddress } from "ethers";

import { OrderStatus } from "@avn/protocol/intents";
import type { DestinationSettler, OriginSettler } from "../../typechain-types/index.ts";
import { fastTransfer } from "../bridge/fast-transfer.ts";
import { contractAt } from "../common/artifacts.ts";

/** How an order ended: settled (filled on L1, the solver repaid on the L2), refundable (never filled), or neither in time. */
export type OrderEnd = "settled" | "refundable" | "lost";

/** What each order asks for: 1 ETH on the L2 for 1 ETH less the solver's fee on L1. */
const AMOUNT = parseEther("1");

/**
 * Fast withdrawals of ETH (docs/intents.md) from one account of the stack, for its solver to fill on L1: opened and
 * followed as the bridge CLI's `fast-withdraw` does (`fastTransfer`: a default ethers wallet, no gas override).
 */
export class FastWithdrawals {
  readonly #chains: Parameters<typeof fastTransfer>[1];
  readonly #feeBps: number;
  readonly #origin: OriginSettler;
  readonly #destination: DestinationSettler;

  constructor(input: {
    l1: Provider;
    l2: Provider;
    chains: Parameters<typeof fastTransfer>[1];
    destinationSettler: string;
    feeBps: number;
  }) {
    this.#chains = input.chains;
    this.#feeBps = input.feeBps;
    this.#origin = contractAt<OriginSettler>("OriginSettler", input.chains.originSettler, input.l2, "intents");
    this.#destination = contractAt<DestinationSettler>("DestinationSettler", input.destinationSettler, input.l1, "intents");
  }

  /** Opens one; resolves once it is open, with its id and how it ends (followed for `timeoutMs` at most). */
  async open(timeoutMs: number): Promise<{ orderId: string; ended: Promise<OrderEnd> }> {
    let opened!: (orderId: string) => void;
    const orderId = new Promise<string>((resolve) => (opened = resolve));
    const followed = fastTransfer({ direction: "withdraw", asset: "eth", amount: AMOUNT, feeBps: this.#feeBps }, this.#chains, {
      untilSettled: true,
      timeoutMs,
      onStage: (stage) => {
        if (stage.stage === "opened") opened(stage.orderId);
      },
    });
    // A transfer that fails before its order is open throws here: no order, nothing to follow.
    const id = await Promise.race([orderId, followed.then(() => orderId)]);
    return {
      orderId: id,
      ended: followed.then(
        (stage) => (stage.stage === "settled" ? "settled" : "refundable"),
        () => "lost" as const,
      ),
    };
  }

  /** Whether its fill is on L1. */
  async filled(orderId: string): Promise<boolean> {
    const [repayTo] = await this.#destination.fills(orderId);
    return repayTo !== ZeroAddress;
  }

  /** Whether the L2 has repaid its filler. */
  async settled(orderId: string): Promise<boolean> {
    return Number(await this.#origin.orderStatus(orderId)) === OrderStatus.settled;
  }

  /** How many times it was filled on L1 (its `Filled` events). */
  async fills(orderId: string): Promise<number> {
    return (await this.#destination.queryFilter(this.#destination.filters.Filled(orderId))).length;
  }
}
