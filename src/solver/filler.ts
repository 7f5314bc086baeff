import { Contract, type JsonRpcProvider, Transaction, type Wallet, ZeroAddress } from "ethers";

import { decodeOriginData, NATIVE_TOKEN, type OriginData } from "@avn/protocol/intents";
import type { IIntentDestinationSettler } from "../../typechain-types/index.ts";
import type { JournaledOrder, SolverJournal } from "./journal.ts";

/** How a fill went, once its transaction is known on the destination chain. */
export type FillOutcome = { kind: "filled"; block: number } | { kind: "taken"; reason: string } | { kind: "pending" } | { kind: "resent" };

/**
 * Sends fills on the destination chain (L1 for fast withdrawals, the L2 for fast deposits) from the solver's wallet. Each fill is signed, journaled (`filling`, with its raw bytes) and only
 * then broadcast, with nonces the filler counts itself so that several fills are in flight at once. A fill found
 * after a restart is looked up by its hash and, if the node has never seen it, broadcast again as signed: the
 * same transaction, never a second one. The destination settler refuses a second fill of an order anyway, so at
 * worst a repeat costs gas; the journal keeps it from happening.
 */
export class Filler {
  readonly #provider: JsonRpcProvider;
  readonly #wallet: Wallet;
  readonly #destination: IIntentDestinationSettler;
  readonly #journal: SolverJournal;
  #nonce: number | undefined;

  constructor(options: { provider: JsonRpcProvider; wallet: Wallet; destination: IIntentDestinationSettler; journal: SolverJournal }) {
    this.#provider = options.provider;
    this.#wallet = options.wallet;
    this.#destination = options.destination;
    this.#journal = options.journal;
  }

  /**
   * Signs, journals and broadcasts the fill of `order`. The estimate runs first: an order filled by someone else or
   * past its deadline is refused there, before anything is signed (and it throws, with the settler's error).
   */
  async send(order: JournaledOrder): Promise<string> {
    const terms = decodeOriginData(order.originData as `0x${string}`);
    const value = terms.outputToken === NATIVE_TOKEN ? terms.outputAmount : 0n;
    const request = await this.#destination.fill.populateTransaction(order.orderId, order.originData, "0x", { value });
    const [gasLimit, fees, network] = await Promise.all([
      this.#provider.estimateGas({ ...request, from: this.#wallet.address }),
      this.#provider.getFeeData(),
      this.#provider.getNetwork(),
    ]);
    this.#nonce ??= await this.#provider.getTransactionCount(this.#wallet.address, "pending");
    const raw = await this.#wallet.signTransaction({
      ...request,
      type: 2,
      chainId: network.chainId,
      nonce: this.#nonce,
      gasLimit,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const hash = Transaction.from(raw).hash!;
    this.#journal.filling(order.orderId, { raw, hash });
    this.#nonce += 1;
    try {
      await this.#provider.broadcastTransaction(raw);
    } catch (error) {
      // The next fill counts its nonce from the node again; this one is resolved from the journal (`check`).
      this.#nonce = undefined;
      throw error;
    }
    return hash;
  }

  /** Counts the next nonce from the node again (after another sender used the key). */
  resetNonce(): void {
    this.#nonce = undefined;
  }

  /** Waits for a fill's receipt; `check` then says how it went. */
  async waitMined(hash: string): Promise<void> {
    await this.#provider.waitForTransaction(hash);
  }

  /**
   * Where a journaled fill stands on the destination chain: mined (filled by this solver, or reverted because another filler was
   * first), still pending, or unknown to the node (then broadcast again as signed, when its nonce is still free).
   */
  async check(order: JournaledOrder): Promise<FillOutcome> {
    const receipt = await this.#provider.getTransactionReceipt(order.fillHash!);
    if (receipt !== null && receipt.status === 1) return { kind: "filled", block: receipt.blockNumber };
    const [repayTo] = await this.#destination.fills(order.orderId);
    if (repayTo.toLowerCase() === this.#wallet.address.toLowerCase())
      return { kind: "filled", block: await this.#provider.getBlockNumber() };
    if (repayTo !== ZeroAddress) return { kind: "taken", reason: "filled by another filler" };
    if (receipt !== null) return { kind: "taken", reason: "the fill reverted" };
    if ((await this.#provider.getTransaction(order.fillHash!)) !== null) return { kind: "pending" };
    const signed = Transaction.from(order.fillRaw);
    if (signed.nonce < (await this.#provider.getTransactionCount(this.#wallet.address, "latest")))
      return { kind: "taken", reason: "its nonce was used by another transaction" };
    await this.#provider.broadcastTransaction(order.fillRaw!);
    return { kind: "resent" };
  }

  /** The solver's inventory on the destination chain: ETH and `tokenAddress`. */
  async inventory(tokenAddress: string): Promise<{ eth: bigint; token: bigint }> {
    const token = new Contract(tokenAddress, ["function balanceOf(address) view returns (uint256)"], this.#provider);
    const [eth, tokens] = await Promise.all([
      this.#provider.getBalance(this.#wallet.address),
      token.balanceOf(this.#wallet.address) as Promise<bigint>,
    ]);
    return { eth, token: tokens };
  }
}

/** The order's terms, for logs. */
export function describeOrder(terms: OriginData): Record<string, string> {
  return {
    input: `${terms.inputAmount} ${terms.inputToken === NATIVE_TOKEN ? "wei" : terms.inputToken}`,
    output: `${terms.outputAmount} ${terms.outputToken === NATIVE_TOKEN ? "wei" : terms.outputToken}`,
    recipient: terms.recipient,
    fillDeadline: String(terms.fillDeadline),
  };
}
