import type { Provider, Transaction, TransactionReceipt, Wallet } from "ethers";

import type { Fees } from "./fees.ts";

// The burner's transactions as TxSender signs and finds them: every one is EIP-1559 (type 2) on the
// L2's chain id, and a nonce may have been signed several times (fee bumps), any of which may be mined.

const TRANSFER_GAS = 21_000n;

export interface Signing {
  wallet: Wallet;
  chainId: bigint;
}

/** A call to `to` with `data`, at `nonce`. */
export function signCall(
  signing: Signing,
  call: { nonce: number; to: string; data: string; gasLimit: bigint },
  fees: Fees,
): Promise<string> {
  return signing.wallet.signTransaction({ type: 2, chainId: signing.chainId, ...call, ...fees });
}

/** A plain transfer of nothing to the burner itself at `nonce`: it uses the nonce up and does nothing else. */
export function signCancellation(signing: Signing, nonce: number, fees: Fees): Promise<string> {
  const { wallet, chainId } = signing;
  return wallet.signTransaction({ type: 2, chainId, nonce, to: wallet.address, value: 0n, gasLimit: TRANSFER_GAS, ...fees });
}

/** `previous` again, same nonce and content, with other fees. */
export function signReplacement(wallet: Wallet, previous: Transaction, fees: Fees): Promise<string> {
  const { chainId, nonce, to, value, data, gasLimit } = previous;
  return wallet.signTransaction({ type: 2, chainId, nonce, to, value, data, gasLimit, ...fees });
}

/** The receipt of whichever of `hashes` was mined, if one was. */
export async function receiptOfAny(provider: Provider, hashes: readonly string[]): Promise<TransactionReceipt | undefined> {
  for (const hash of hashes) {
    const receipt = await provider.getTransactionReceipt(hash);
    if (receipt !== null) return receipt;
  }
  return undefined;
}
