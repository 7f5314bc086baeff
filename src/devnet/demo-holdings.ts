import type { Address } from "@solana/kit";
import { ContractFactory, type Signer } from "ethers";
import hre from "hardhat";

import type { SolanaTokenLedger } from "./solana/token-ledger.ts";
import type { StackFile } from "../common/stack-file.ts";

/** An ERC-20 balance above 2^53: the API must write it as an exact JSON integer. */
export const ABOVE_2_53 = 2n ** 53n + 12_345n;
export const ERC721_TOKENS_HELD = 3n;
export const SPL_ACCOUNT_AMOUNTS = [4_000_000n, 3_500_000n] as const;
/**
 * Token accounts of one owner for one mint: anyone can open token accounts for any wallet on Solana, so
 * a QueryResult can be made this long (165,000 bytes) by a stranger. One holds MANY_ACCOUNTS_AMOUNT.
 */
export const MANY_ACCOUNTS = 1_000;
export const MANY_ACCOUNTS_AMOUNT = 2_500_000n;

export interface EvmDemoHoldings {
  erc20: string;
  erc721: string;
  /** Holds ABOVE_2_53 of the ERC-20 and ERC721_TOKENS_HELD of the ERC-721. */
  holder: string;
  /** Holds nothing. */
  empty: string;
}

export interface SolanaDemoHoldings {
  /** Two SPL token accounts for `splMint` (SPL_ACCOUNT_AMOUNTS) and ABOVE_2_53 of `t22Mint` (Token-2022). */
  owner: Address;
  splMint: Address;
  t22Mint: Address;
  /** An NFT (supply 1, decimals 0) held by `nftOwner`. */
  nftMint: Address;
  nftOwner: Address;
  /** Holds no token account at all. */
  emptyOwner: Address;
  /** Holds MANY_ACCOUNTS token accounts for `splMint`, all empty but one. */
  manyAccountsOwner: Address;
}

/** Deploys the demo ERC-20 and ERC-721 (test-only contracts in contracts/mocks) with their holdings. */
export async function seedEvmDemo(deployer: Signer, holder: string, empty: string): Promise<EvmDemoHoldings> {
  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract.getAddress();
  };
  return {
    erc20: await deploy("PlainERC20", [holder, ABOVE_2_53]),
    erc721: await deploy("PlainERC721", [holder, ERC721_TOKENS_HELD]),
    holder,
    empty,
  };
}

/** Mints the Solana demo holdings with real SPL Token and Token-2022 instructions on the ledger. */
export async function seedSolanaDemo(ledger: SolanaTokenLedger): Promise<SolanaDemoHoldings> {
  const owner = await ledger.newWallet();
  const splMint = await ledger.createMint("spl", 6);
  await ledger.mintTo(splMint, await ledger.associatedAccount(owner.address, splMint), SPL_ACCOUNT_AMOUNTS[0]);
  await ledger.mintTo(splMint, await ledger.extraAccount(owner.address, splMint), SPL_ACCOUNT_AMOUNTS[1]);
  const t22Mint = await ledger.createMint("token-2022", 9);
  await ledger.mintTo(t22Mint, await ledger.associatedAccount(owner.address, t22Mint), ABOVE_2_53);
  const nftOwner = (await ledger.newWallet()).address;
  const { mint: nftMint } = await ledger.createNft(nftOwner);
  const emptyOwner = (await ledger.newWallet()).address;
  const manyAccountsOwner = (await ledger.newWallet()).address;
  await ledger.mintTo(splMint, await ledger.associatedAccount(manyAccountsOwner, splMint), MANY_ACCOUNTS_AMOUNT);
  for (let i = 1; i < MANY_ACCOUNTS; i++) await ledger.extraAccount(manyAccountsOwner, splMint);
  return { owner: owner.address, splMint, t22Mint, nftMint, nftOwner, emptyOwner, manyAccountsOwner };
}

/** The `demo` section of the stack file: every holding with its expected balance. */
export function demoSection(evm: EvmDemoHoldings, svm: SolanaDemoHoldings): NonNullable<StackFile["demo"]> {
  const spl = SPL_ACCOUNT_AMOUNTS[0] + SPL_ACCOUNT_AMOUNTS[1];
  return {
    evm: [
      { user_address: evm.holder, contract_address: evm.erc20, kind: "erc20", balance: String(ABOVE_2_53), note: "above 2^53" },
      { user_address: evm.empty, contract_address: evm.erc20, kind: "erc20", balance: "0", note: "zero balance" },
      {
        user_address: evm.holder,
        contract_address: evm.erc721,
        kind: "erc721",
        balance: String(ERC721_TOKENS_HELD),
        note: "several tokens",
      },
    ],
    svm: [
      { owner_address: svm.owner, token_mint_address: svm.splMint, kind: "spl", balance: String(spl), note: "two token accounts" },
      { owner_address: svm.owner, token_mint_address: svm.t22Mint, kind: "token-2022", balance: String(ABOVE_2_53), note: "above 2^53" },
      { owner_address: svm.nftOwner, token_mint_address: svm.nftMint, kind: "nft", balance: "1", note: "supply 1, decimals 0" },
      { owner_address: svm.emptyOwner, token_mint_address: svm.splMint, kind: "spl", balance: "0", note: "no token account" },
      {
        owner_address: svm.manyAccountsOwner,
        token_mint_address: svm.splMint,
        kind: "spl",
        balance: String(MANY_ACCOUNTS_AMOUNT),
        note: `${MANY_ACCOUNTS} token accounts (a ${MANY_ACCOUNTS * 165}-byte QueryResult)`,
      },
    ],
  };
}
