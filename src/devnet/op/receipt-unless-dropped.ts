import type { TransactionReceipt, TransactionResponse } from "ethers";

/**
 * The receipt of the last of `batch` (one sender's transactions at consecutive nonces, in nonce order) once it is
 * mined, or null once it never can be, checked now and again at each new block. A reorg drops the transactions of
 * the blocks it replaces: anvil's `anvil_reorg` puts none back in its pool, and the stale receipt it answers for a
 * moment after goes once new blocks take those numbers. The batch can then never be mined when:
 * - the node no longer knows one of its transactions not mined yet (the rest wait behind its nonce);
 * - the sender's mined nonce went back below the batch's first (a reorg dropped a transaction sent before the batch,
 *   whose nonce was read before the reorg): anvil keeps the batch queued, and answers it as pending, for good;
 * - the last one's nonce was spent by another transaction.
 * ethers' `wait()` would wait for good in each case, since its replacement check looks for a nonce past the
 * transaction's.
 */
export async function receiptUnlessDropped(batch: readonly TransactionResponse[]): Promise<TransactionReceipt | null> {
  const last = batch.at(-1);
  if (last === undefined) throw new RangeError("receiptUnlessDropped: no transaction to wait for");
  const { provider, from } = last;
  const firstNonce = batch[0].nonce;
  if (batch.some((sent, index) => sent.from !== from || sent.nonce !== firstNonce + index))
    throw new RangeError("receiptUnlessDropped: the batch must be one sender's transactions at consecutive nonces");

  /** The last one's receipt, null if the batch can never be mined, or undefined to look again at the next block. */
  const check = async (): Promise<TransactionReceipt | null | undefined> => {
    const minedNonce = await provider.getTransactionCount(from, "latest");
    if (minedNonce < firstNonce) return null;
    if (minedNonce > last.nonce) {
      const receipt = await provider.getTransactionReceipt(last.hash);
      if (receipt !== null) return receipt;
      const seen = await provider.getTransaction(last.hash);
      // Mined in a block that a reorg replaced a moment ago (a stale answer): look again at the next block.
      // Otherwise its nonce went to another transaction.
      return seen?.blockNumber != null ? undefined : null;
    }
    for (const sent of batch.slice(minedNonce - firstNonce)) if ((await provider.getTransaction(sent.hash)) === null) return null;
    return undefined;
  };

  for (;;) {
    // Subscribed before the check, so that a block mined meanwhile is not missed.
    let blockCame!: () => void;
    const nextBlock = new Promise<void>((resolve) => (blockCame = resolve));
    await provider.once("block", blockCame);
    try {
      const outcome = await check();
      if (outcome !== undefined) return outcome;
      await nextBlock;
    } finally {
      // Only this wait's listener: the provider is shared with other services.
      await provider.off("block", blockCame);
    }
  }
}
