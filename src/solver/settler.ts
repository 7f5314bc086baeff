import type { JsonRpcProvider, NonceManager } from "ethers";

import { fillSlotOf, OrderStatus } from "@avn/protocol/intents";
import type { L1BlockHashes, OriginSettler } from "../../typechain-types/index.ts";
import { buildStorageProof } from "../chains/evm/balance-proof.ts";
import type { JournaledOrder } from "./journal.ts";

/** What a settlement came to. */
export type SettleOutcome = { kind: "settled"; hash?: string } | { kind: "refunded" };

/**
 * Settles filled orders on the L2: proves the destination settler's fill record at an L1 block recorded in
 * `L1BlockHashes` (a block the L2 keeps knowing, unlike `L1Block`'s current one, which the next L1 block replaces,
 * often before a transaction that proves against it is mined) and sends `settle`. When the L2 has learnt a block at
 * or after the fill but nobody has recorded one yet, it records the current one itself (anyone may).
 */
export class Settler {
  readonly #l1: JsonRpcProvider;
  readonly #origin: OriginSettler;
  readonly #hashes: L1BlockHashes;
  readonly #destination: string;
  #recording: Promise<unknown> | undefined;

  constructor(options: { l1: JsonRpcProvider; origin: OriginSettler; hashes: L1BlockHashes; destination: string; signer: NonceManager }) {
    this.#l1 = options.l1;
    this.#origin = options.origin.connect(options.signer);
    this.#hashes = options.hashes.connect(options.signer);
    this.#destination = options.destination;
  }

  /** The newest L1 block recorded on the L2, or, when a newer one reached `L1Block` and covers `atLeast`, none yet. */
  async provableBlock(atLeast: number): Promise<number | undefined> {
    const [[latest], [current]] = await Promise.all([this.#hashes.latest(), this.#hashes.current()]);
    if (latest >= BigInt(atLeast)) return Number(latest);
    if (current >= BigInt(atLeast) && this.#recording === undefined) {
      this.#recording = this.#hashes
        .record()
        .then((tx) => tx.wait())
        .finally(() => (this.#recording = undefined));
      await this.#recording;
      const [recorded] = await this.#hashes.latest();
      if (recorded >= BigInt(atLeast)) return Number(recorded);
    }
    return undefined;
  }

  /** Sends the settlement of one filled order on a proof at L1 block `l1Block`, and waits for it. */
  async settle(order: JournaledOrder, l1Block: number, onSent: (hash: string) => void): Promise<SettleOutcome> {
    const status = Number(await this.#origin.orderStatus(order.orderId));
    if (status === OrderStatus.settled) return { kind: "settled" };
    if (status === OrderStatus.refunded) return { kind: "refunded" };
    const rpc = { request: <T>(method: string, params: unknown[]) => this.#l1.send(method, params) as Promise<T> };
    const { encoded } = await buildStorageProof(rpc, {
      account: this.#destination,
      slots: [fillSlotOf(order.orderId as `0x${string}`)],
      blockNumber: BigInt(l1Block),
    });
    const tx = await this.#origin.settle(order.originData, encoded);
    onSent(tx.hash);
    const receipt = await tx.wait();
    return { kind: "settled", hash: receipt?.hash };
  }
}
