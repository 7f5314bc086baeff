import { ContractFactory, Wallet, type ContractTransactionResponse, type Signer } from "ethers";
import hre from "hardhat";

import type { ChallengeTarget } from "../challenger/challenger.ts";
import { E18 } from "@avn/protocol/units";
import type { SolanaTokenLedger } from "./solana/token-ledger.ts";

/** Owners the challenge holdings are spread over, on each chain. */
export const CHALLENGE_OWNERS = 6;

/**
 * Holdings of their own for the challenger to ask about, never the demo's (a challenge must not be
 * answerable from the public demo): a challenge ERC-20 on the EVM source, the deployer's supply spread over
 * fresh addresses in random amounts, and a challenge SPL mint with accounts of fresh wallets on the Solana
 * endpoint. Returns the targets file's entries.
 */
export async function seedChallengeHoldings(deployer: Signer, ledger: SolanaTokenLedger, random = Math.random): Promise<ChallengeTarget[]> {
  const amount = () => BigInt(1 + Math.floor(random() * 1_000_000)) * (E18 / 1_000n);
  const artifact = await hre.artifacts.readArtifact("PlainERC20");
  const supply = BigInt(CHALLENGE_OWNERS) * 1_000n * E18;
  const token = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(await deployer.getAddress(), supply);
  await token.waitForDeployment();
  const asset = await token.getAddress();
  const targets: ChallengeTarget[] = [];
  for (let index = 0; index < CHALLENGE_OWNERS; index++) {
    const owner = Wallet.createRandom().address;
    const transfer = (await token.getFunction("transfer")(owner, amount())) as ContractTransactionResponse;
    await transfer.wait();
    targets.push({ chain: "evm", owner, asset });
  }
  const mint = await ledger.createMint("spl", 6);
  for (let index = 0; index < CHALLENGE_OWNERS; index++) {
    const owner = (await ledger.newWallet()).address;
    await ledger.mintTo(mint, await ledger.associatedAccount(owner, mint), BigInt(1 + Math.floor(random() * 1_000_000_000)));
    targets.push({ chain: "svm", owner, asset: mint });
  }
  return targets;
}
