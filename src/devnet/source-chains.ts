import { NonceManager, Wallet } from "ethers";
import hre from "hardhat";

import { devAccount } from "./accounts.ts";
import { startAnvil, type AnvilInstance } from "./anvil.ts";
import { seedEvmDemo, seedSolanaDemo, type EvmDemoHoldings, type SolanaDemoHoldings } from "./demo-holdings.ts";
import { installMulticall3 } from "./op/l2.ts";
import { installDelegateRegistry } from "./delegate-registry.ts";
import { startSolanaRpcServer, type SolanaRpcServer } from "./solana/litesvm-rpc-server.ts";
import { SolanaTokenLedger } from "./solana/token-ledger.ts";
import { devnetProvider } from "./op-devnet.ts";

export { ABOVE_2_53 } from "./demo-holdings.ts";

/**
 * The source chains of the API tests and benchmarks: an anvil "Ethereum" (chain 1) with Multicall3 and
 * the demo tokens (ERC-20, ERC-721, ERC-1155), and a LiteSVM "Solana" endpoint with the demo holdings (the
 * same as `npm start` seeds).
 */
export interface SourceFixtures {
  anvil: AnvilInstance;
  solanaRpc: SolanaRpcServer;
  /** The ledger behind `solanaRpc`: tests move tokens on it. */
  ledger: SolanaTokenLedger;
  evm: EvmDemoHoldings;
  svm: SolanaDemoHoldings;
  stop(): Promise<void>;
}

/** `evmBlockSeconds`: the Ethereum source mines a block that often instead of one per transaction (a benchmark's chain time). */
export async function startSourceFixtures(options: { evmBlockSeconds?: number } = {}): Promise<SourceFixtures> {
  const anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage, blockTime: options.evmBlockSeconds });
  const provider = devnetProvider(anvil.rpcUrl, 1);
  await installMulticall3(provider);
  await installDelegateRegistry(provider);
  const deployer = new NonceManager(new Wallet(devAccount(0).privateKey, provider));
  // The accounts of the local stack's roles (NETWORK_ACCOUNTS): holder 7, empty 8, collector 10.
  const evm = await seedEvmDemo(deployer, devAccount(7).address, devAccount(8).address, devAccount(10).address);
  provider.destroy();

  const ledger = await SolanaTokenLedger.create();
  const solanaRpc = await startSolanaRpcServer(ledger);
  const svm = await seedSolanaDemo(ledger);
  return {
    anvil,
    solanaRpc,
    ledger,
    evm,
    svm,
    async stop() {
      await solanaRpc.close();
      await anvil.stop();
    },
  };
}
