import { decodeFunctionResult, encodeFunctionData, getAddress, parseAbi, toHex, type Hex } from "viem";

import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import {
  DELEGATE_REGISTRY_ABI,
  DELEGATE_REGISTRY_ADDRESS,
  delegatedShares,
  lentBalance,
  MAX_DELEGATING_WALLETS,
  type Delegation,
} from "@avn/protocol/delegations";
import { DelegationLimitError, SourceError } from "../rpc/errors.ts";
import type { EvmBalanceReader } from "./balance-reader.ts";

/** The most ERC-721 token delegations one answer checks the ownership of. */
export const MAX_DELEGATED_TOKENS = 100;

/** What an owner holds with its delegations counted. */
export interface DelegatedBalance {
  /** The owner's own balance and what each counted wallet lends it, summed. */
  balance: bigint;
  /** The sum as a 32-byte word, as `balanceOf` returns one (`0x` + 64 hex digits). */
  queryResult: string;
  /** The wallets that delegated to the owner for this asset, checksummed, in the registry's order (the owner not among them). */
  wallets: string[];
}

const OWNER_OF_ABI = parseAbi(["function ownerOf(uint256 tokenId) view returns (address)"]);
const AGGREGATE3_ABI = parseAbi([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)",
]);

/**
 * `owner`'s balance of `asset` (an ERC-1155 id with `tokenId`) at `block`, with what the wallets that delegated
 * to it through delegate.xyz v2 hold counted in (`delegatedShares`: empty rights only). Everything is read at
 * `block`: the delegations, every balance (the reader's Multicall3 batches) and the ERC-721 tokens' owners.
 */
export async function delegatedBalanceOf(
  reader: Pick<EvmBalanceReader, "balanceOf" | "callAt">,
  asset: string,
  owner: string,
  block: bigint,
  tokenId?: bigint,
): Promise<DelegatedBalance> {
  const [own, delegations] = await Promise.all([reader.balanceOf(asset, owner, block, tokenId), incomingDelegations(reader, owner, block)]);
  const shares = delegatedShares(delegations, owner, asset, tokenId);
  if (shares.length > MAX_DELEGATING_WALLETS)
    throw new DelegationLimitError(
      `${shares.length} wallets delegate to ${getAddress(owner)}: at most ${MAX_DELEGATING_WALLETS} are counted`,
    );
  const tokens = shares.flatMap((share) => (share.whole ? [] : share.tokenIds.map((id) => ({ from: share.from, id }))));
  if (tokens.length > MAX_DELEGATED_TOKENS)
    throw new DelegationLimitError(
      `${tokens.length} ERC-721 tokens are delegated to ${getAddress(owner)}: at most ${MAX_DELEGATED_TOKENS} are counted`,
    );
  const [balances, owners] = await Promise.all([
    Promise.all(shares.map((share) => reader.balanceOf(asset, share.from, block, tokenId))),
    ownersOf(
      reader,
      asset,
      tokens.map(({ id }) => id),
      block,
    ),
  ]);
  let balance = own.balance;
  for (const [index, share] of shares.entries()) {
    const owned = tokens.filter(({ from }, at) => from === share.from && owners[at] === share.from).length;
    balance += lentBalance(share, balances[index].balance, owned);
  }
  return { balance, queryResult: toHex(balance, { size: 32 }), wallets: shares.map((share) => share.from) };
}

/** `getIncomingDelegations(owner)` at `block` (revoked delegations are not listed). */
async function incomingDelegations(reader: Pick<EvmBalanceReader, "callAt">, owner: string, block: bigint): Promise<readonly Delegation[]> {
  const data = encodeFunctionData({ abi: DELEGATE_REGISTRY_ABI, functionName: "getIncomingDelegations", args: [getAddress(owner)] });
  const raw = (await reader.callAt(DELEGATE_REGISTRY_ADDRESS, data, block)) as Hex;
  if (raw === "0x") throw new SourceError(`no DelegateRegistry (delegate.xyz v2) at ${DELEGATE_REGISTRY_ADDRESS} on this chain`);
  return decodeFunctionResult({ abi: DELEGATE_REGISTRY_ABI, functionName: "getIncomingDelegations", data: raw });
}

/** Each token's `ownerOf` at `block`, one Multicall3 call; a token without owner (its call reverts) is undefined. */
async function ownersOf(
  reader: Pick<EvmBalanceReader, "callAt">,
  asset: string,
  ids: bigint[],
  block: bigint,
): Promise<Array<string | undefined>> {
  if (ids.length === 0) return [];
  const calls = ids.map((id) => ({
    target: getAddress(asset),
    allowFailure: true,
    callData: encodeFunctionData({ abi: OWNER_OF_ABI, functionName: "ownerOf", args: [id] }),
  }));
  const raw = (await reader.callAt(
    MULTICALL3_ADDRESS,
    encodeFunctionData({ abi: AGGREGATE3_ABI, functionName: "aggregate3", args: [calls] }),
    block,
  )) as Hex;
  const results = decodeFunctionResult({ abi: AGGREGATE3_ABI, functionName: "aggregate3", data: raw });
  return results.map(({ success, returnData }) =>
    success && returnData.length === 66
      ? getAddress(decodeFunctionResult({ abi: OWNER_OF_ABI, functionName: "ownerOf", data: returnData }))
      : undefined,
  );
}
