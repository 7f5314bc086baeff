import { createSignableMessage, getBase58Decoder, type Address, type KeyPairSigner } from "@solana/kit";
import { ContractFactory, type Signer } from "ethers";
import hre from "hardhat";

import { conditionHash, linkMessage } from "@avn/protocol/conditions";

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

/** The demo ERC-1155 collection: ERC1155_ITEM_AMOUNT of item ERC1155_ITEM_ID, and ABOVE_2_53 of item id ABOVE_2_53. */
export const ERC1155_ITEM_ID = 1n;
export const ERC1155_ITEM_AMOUNT = 3n;
/** NFTs in the Solana demo collection; the collector holds the first two, `nftOwner` the last. */
export const COLLECTION_SIZE = 3;

export interface EvmDemoHoldings {
  erc20: string;
  erc721: string;
  erc1155: string;
  /** Holds ABOVE_2_53 of the ERC-20 and ERC721_TOKENS_HELD of the ERC-721. */
  holder: string;
  /** Holds nothing. */
  empty: string;
  /** Holds the ERC-1155 items, and is linked to the Solana collector (the example game's player). */
  collector: string;
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
  /** The NFT collection's COLLECTION_SIZE mints. */
  collection: Address[];
  /** Holds the collection's first two NFTs; its key signs the link to the Ethereum collector. */
  collector: KeyPairSigner;
}

/** Deploys the demo ERC-20, ERC-721 and ERC-1155 (test-only contracts in contracts/mocks) with their holdings. */
export async function seedEvmDemo(deployer: Signer, holder: string, empty: string, collector: string): Promise<EvmDemoHoldings> {
  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract.getAddress();
  };
  return {
    erc20: await deploy("PlainERC20", [holder, ABOVE_2_53]),
    erc721: await deploy("PlainERC721", [holder, ERC721_TOKENS_HELD]),
    erc1155: await deploy("PlainERC1155", [collector, [ERC1155_ITEM_ID, ABOVE_2_53], [ERC1155_ITEM_AMOUNT, ABOVE_2_53]]),
    holder,
    empty,
    collector,
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
  const collector = await ledger.newWallet();
  const collection: Address[] = [];
  for (let i = 0; i < COLLECTION_SIZE; i++)
    collection.push((await ledger.createNft(i < COLLECTION_SIZE - 1 ? collector.address : nftOwner)).mint);
  return { owner: owner.address, splMint, t22Mint, nftMint, nftOwner, emptyOwner, manyAccountsOwner, collection, collector };
}

/** A demo condition of the stack file: the POST /api/conditions body, the verdict it must get, and why. */
export interface DemoCondition {
  request: Record<string, unknown>;
  verdict: boolean;
  note: string;
}

/**
 * The demo's conditions over its holdings, at least one per kind a reader should see: true and false,
 * Ethereum only, Solana only, both chains with the Solana collector's link signature (over the L2 chain
 * `l2ChainId`), and one with `reveal: false`. The first is the example game's (`gameConditionHash`).
 */
export async function demoConditions(evm: EvmDemoHoldings, svm: SolanaDemoHoldings, l2ChainId: number): Promise<DemoCondition[]> {
  const linked = { ethereum: evm.collector, solana: svm.collector.address };
  const [signed] = await svm.collector.signMessages([createSignableMessage(linkMessage(evm.collector, l2ChainId))]);
  const links = { solana: getBase58Decoder().decode(signed[svm.collector.address]) };
  const item = (id: bigint, min: bigint) => ({ chain: "ethereum", contract_address: evm.erc1155, token_id: String(id), min: String(min) });
  const nft = (mint: Address) => ({ chain: "solana", token_mint_address: mint });
  const splHeld = String(SPL_ACCOUNT_AMOUNTS[0] + SPL_ACCOUNT_AMOUNTS[1]);
  return [
    {
      request: { owners: linked, condition: { all: [item(ERC1155_ITEM_ID, 2n), { any: svm.collection.map(nft) }] }, links },
      verdict: true,
      note: `the example game's condition: at least 2 of ERC-1155 item ${ERC1155_ITEM_ID} on Ethereum and any NFT of the ${COLLECTION_SIZE}-mint Solana collection, owners linked`,
    },
    {
      request: {
        owners: { ethereum: evm.empty },
        condition: {
          any: [
            { chain: "ethereum", contract_address: evm.erc20 },
            { chain: "ethereum", contract_address: evm.erc721 },
          ],
        },
      },
      verdict: false,
      note: "holds the demo ERC-20 or the ERC-721 (this wallet holds neither)",
    },
    {
      request: {
        owners: { solana: svm.owner },
        condition: {
          all: [
            { chain: "solana", token_mint_address: svm.splMint, min: splHeld, max: splHeld },
            { chain: "solana", token_mint_address: svm.t22Mint, min: String(ABOVE_2_53) },
            { not: nft(svm.nftMint) },
          ],
        },
        reveal: false,
      },
      verdict: true,
      note: "exactly 7.5 SPL tokens over two accounts, at least 2^53+12345 Token-2022 units, and not the demo NFT; leaves not revealed",
    },
    {
      request: {
        owners: linked,
        condition: {
          atLeast: 2,
          of: [
            item(ABOVE_2_53, ABOVE_2_53 + 1n),
            { chain: "ethereum", contract_address: evm.erc20 },
            nft(svm.collection[COLLECTION_SIZE - 1]),
          ],
        },
        links,
      },
      verdict: false,
      note: "two of three: one more ERC-1155 unit of the id above 2^53 than held, the ERC-20, the collection's third NFT (none holds)",
    },
  ];
}

/** The condition the example game pins: the first demo condition's. */
export function gameConditionHash(conditions: readonly DemoCondition[]): string {
  return conditionHash(conditions[0].request.condition);
}

/** The `demo` section of the stack file: every holding with its expected balance, and the demo conditions. */
export function demoSection(evm: EvmDemoHoldings, svm: SolanaDemoHoldings, conditions: DemoCondition[]): NonNullable<StackFile["demo"]> {
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
      {
        user_address: evm.collector,
        contract_address: evm.erc1155,
        kind: "erc1155",
        token_id: String(ERC1155_ITEM_ID),
        balance: String(ERC1155_ITEM_AMOUNT),
        note: "an ERC-1155 item",
      },
      {
        user_address: evm.collector,
        contract_address: evm.erc1155,
        kind: "erc1155",
        token_id: String(ABOVE_2_53),
        balance: String(ABOVE_2_53),
        note: "ERC-1155 id and amount above 2^53",
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
      ...svm.collection.map((mint, index) => ({
        owner_address: index < COLLECTION_SIZE - 1 ? svm.collector.address : svm.nftOwner,
        token_mint_address: mint,
        kind: "nft",
        balance: "1",
        note: `collection NFT ${index + 1} of ${COLLECTION_SIZE}`,
      })),
    ],
    conditions,
  };
}
