import { HDNodeWallet, Mnemonic } from "ethers";

import type { DevAccount } from "../common/stack-file.ts";

/**
 * anvil's public development mnemonic: every anvil node funds the accounts it derives. Their keys are
 * common knowledge and worthless outside a local chain; the local stack publishes them on purpose so
 * that outside tools can act on the devnet.
 */
export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";

/** The `index`-th anvil development account (m/44'/60'/0'/0/index). */
export function devAccount(index: number): DevAccount {
  const wallet = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(ANVIL_MNEMONIC), `m/44'/60'/0'/0/${index}`);
  return { address: wallet.address, privateKey: wallet.privateKey };
}
