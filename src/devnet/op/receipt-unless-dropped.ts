import type { TransactionReceipt, TransactionResponse } from "ethers";

/**
 * The receipt of `sent` once it is mined, or null once the node no longer knows the transaction, checked again at
 * each new block. A reorg drops the transactions of the blocks it replaces: anvil's `anvil_reorg` puts none back in
 * its pool, and the stale receipt it answers for a moment after goes once new blocks take those numbers. ethers'
 * `wait()` would then wait for good, since the sender's nonce went back rather than past the transaction's (its
 * replacement check looks for the latter).
 */
export async function receiptUnlessDropped(sent: TransactionResponse): Promise<TransactionReceipt | null> {
  const { provider } = sent;
  for (;;) {
    // Subscribed before the check, so that a block mined meanwhile is not missed.
    let blockCame!: () => void;
    const nextBlock = new Promise<void>((resolve) => (blockCame = resolve));
    await provider.once("block", blockCame);
    try {
      const seen = await provider.getTransaction(sent.hash);
      if (seen === null) return null;
      if (seen.blockNumber !== null) {
        const receipt = await provider.getTransactionReceipt(sent.hash);
        if (receipt !== null) return receipt;
        // Mined in a block that a reorg replaced a moment ago: look again at the next block.
      }
      await nextBlock;
    } finally {
      // Only this wait's listener: the provider is shared with other services.
      await provider.off("block", blockCame);
    }
  }
}
