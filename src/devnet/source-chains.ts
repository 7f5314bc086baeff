import type { Address } from "@solana/kit";
import { ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import hre from "hardhat";

import { devAccount } from "./accounts.js";
import { startAnvil, type AnvilInstance } from "./anvil.js";
import { installMulticall3 } from "./op/l2.js";
import { startSolanaRpcServer, type SolanaRpcServer } from "./solana/litesvm-rpc-server.js";
import { SolanaTokenLedger } from "./solana/token-ledger.js";

export const ABOVE_2_53 = 2n ** 53n + 12_345n;

/** The source chains of the API tests and benchmarks: an anvil "Ethereum" with tokens, and a LiteSVM "Solana" endpoint. */
export interface SourceFixtures {
  anvil: AnvilInstance;
  solanaRpc: SolanaRpcServer;
  evm: { erc20: string; erc721: string; holder: string; empty: string };
  svm: { owner: Address; splMint: Address; t22Mint: Address; nftMint: Address; nftOwner: Address; emptyOwner: Address };
  stop(): Promise<void>;
}

export async function startSourceFixtures(): Promise<SourceFixtures> {
  const anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage });
  const provider = new JsonRpcProvider(anvil.rpcUrl, 1, { staticNetwork: true, cacheTimeout: -1 });
  await installMulticall3(provider);
  const deployer = new Wallet(devAccount(0).privateKey, provider);
  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    return (await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args)).getAddress();
  };
  const holder = devAccount(7).address;
  const evm = {
    erc20: await deploy("PlainERC20", [holder, ABOVE_2_53]),
    erc721: await deploy("PlainERC721", [holder, 3]),
    holder,
    empty: devAccount(8).address,
  };
  provider.destroy();

  const ledger = await SolanaTokenLedger.create();
  const solanaRpc = await startSolanaRpcServer(ledger.svm);
  const owner = await ledger.newWallet();
  const splMint = await ledger.createMint("spl", 6);
  await ledger.mintTo(splMint, await ledger.associatedAccount(owner.address, splMint), 4_000_000n);
  await ledger.mintTo(splMint, await ledger.extraAccount(owner.address, splMint), 3_500_000n);
  const t22Mint = await ledger.createMint("token-2022", 9);
  await ledger.mintTo(t22Mint, await ledger.associatedAccount(owner.address, t22Mint), ABOVE_2_53);
  const nftOwner = (await ledger.newWallet()).address;
  const { mint: nftMint } = await ledger.createNft(nftOwner);
  const emptyOwner = (await ledger.newWallet()).address;

  return {
    anvil,
    solanaRpc,
    evm,
    svm: { owner: owner.address, splMint, t22Mint, nftMint, nftOwner, emptyOwner },
    async stop() {
      await solanaRpc.close();
      await anvil.stop();
    },
  };
}
