import { decodeFunctionResult, encodeFunctionData, getAddress, parseAbi, toHex, type Hex } from "viem";

import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import {
  DELEGATE_REGISTRY_ABI,
  DELEGATE_REGISTRY_ADDRESS,
  delegatedShares,
  lentBalance,
  MAX_DELEGATED_TOKENS,
  MAX_DELEGATING_WALLETS,
  type Delegation,
} from "@avn/protocol/delegations";
import { DelegationLimitError, DelegationsUnavailableError } from "../rpc/errors.ts";
import type { EvmBalanceReader } from "./balance-reader.ts";

/** What an owner holds with its delegations counted. */
export interface DelegatedBalance {
  /** The owner's own balance and what each delegating wallet lends it, summed. */
  balance: bigint;
  /** The sum as a 32-byte word, as `balanceOf` returns one (`0x` + 64 hex digits). */
  queryResult: string;
  /** The wallets whose delegation lent something, checksummed, in the registry's order (the owner not among them). */
  wallets: string[];
}

/** The incoming delegations already read for an owner at a block: one registry call per (owner, block) in one reading. */
export type DelegationReads = Map<string, Promise<readonly Delegation[]>>;

const OWNER_OF_ABI = parseAbi(["function ownerOf(uint256 tokenId) view returns (address)"]);
const SUPPORTS_INTERFACE_ABI = parseAbi(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);
const AGGREGATE3_ABI = parseAbi([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)",
]);
const ERC721_INTERFACE_ID = "0x80ac58cd";
const MAX_UINT256 = 2n ** 256n - 1n;

type Reader = Pick<EvmBalanceReader, "balanceOf" | "callAt">;

/**
 * `owner`'s balance of `asset` (an ERC-1155 id with `tokenId`) at `block`, with what the wallets that delegated
 * to it through delegate.xyz v2 lend counted in (`delegatedShares`: empty rights only). Everything is read at
 * `block`: the delegations, every delegating wallet's balance (the reader's Multicall3 batches), whether the token
 * is an ERC-721 (ERC-165, only when a delegation's kind depends on it) and the delegated tokens' owners.
 * `reads` shares the registry's answer between the leaves of one condition.
 */
export async function delegatedBalanceOf(
  reader: Reader,
  asset: string,
  owner: string,
  block: bigint,
  tokenId?: bigint,
  reads: DelegationReads = new Map(),
): Promise<DelegatedBalance> {
  const [own, delegations] = await Promise.all([
    reader.balanceOf(asset, owner, block, tokenId),
    incomingDelegations(reader, owner, block, reads),
  ]);
  const shares = delegatedShares(delegations, owner, asset, tokenId);
  if (shares.length > MAX_DELEGATING_WALLETS)
    throw new DelegationLimitError(
      `${shares.length} wallets delegate to ${getAddress(owner)} for this asset: at most ${MAX_DELEGATING_WALLETS} are read`,
    );
  const partial = shares.filter((share) => !share.whole);
  // A share's kind only matters when it is not whole and the balance has no id (an ERC-1155 id is fungible).
  const erc721 = tokenId === undefined && partial.length > 0 ? await supportsErc721(reader, asset, block) : false;
  const tokens = erc721 ? partial.flatMap((share) => share.tokenIds.map((id) => ({ from: share.from, id }))) : [];
  if (tokens.length > MAX_DELEGATED_TOKENS)
    throw new DelegationLimitError(
      `${tokens.length} ERC-721 tokens are delegated to ${getAddress(owner)}: at most ${MAX_DELEGATED_TOKENS} are checked`,
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
  // Each wallet's delegated tokens it still owns, counted once over the tokens (up to a thousand of each).
  const owned = new Map<string, number>();
  for (const [at, { from }] of tokens.entries()) if (owners[at] === from) owned.set(from, (owned.get(from) ?? 0) + 1);
  let balance = own.balance;
  const wallets: string[] = [];
  for (const [index, share] of shares.entries()) {
    const lent = lentBalance(share, balances[index].balance, { erc721, owned: owned.get(share.from) ?? 0 });
    if (lent === 0n) continue;
    balance += lent;
    wallets.push(share.from);
  }
  // Only a token answering absurd balances gets here: a sum no uint256 holds is refused, not wrapped.
  if (balance > MAX_UINT256) throw new DelegationLimitError(`the balances delegated to ${getAddress(owner)} sum above 2^256 - 1`);
  return { balance, queryResult: toHex(balance, { size: 32 }), wallets };
}

/** `getIncomingDelegations(owner)` at `block`, once per (owner, block) in `reads` (revoked delegations are not listed). */
function incomingDelegations(reader: Pick<Reader, "callAt">, owner: string, block: bigint, reads: DelegationReads) {
  const key = `${getAddress(owner)}@${block}`;
  let read = reads.get(key);
  if (read === undefined) {
    read = readIncomingDelegations(reader, owner, block);
    reads.set(key, read);
  }
  return read;
}

async function readIncomingDelegations(reader: Pick<Reader, "callAt">, owner: string, block: bigint): Promise<readonly Delegation[]> {
  const data = encodeFunctionData({ abi: DELEGATE_REGISTRY_ABI, functionName: "getIncomingDelegations", args: [getAddress(owner)] });
  const raw = (await reader.callAt(DELEGATE_REGISTRY_ADDRESS, data, block)) as Hex;
  if (raw === "0x")
    throw new DelegationsUnavailableError(`no DelegateRegistry (delegate.xyz v2) at ${DELEGATE_REGISTRY_ADDRESS} on this Ethereum source`);
  return decodeFunctionResult({ abi: DELEGATE_REGISTRY_ABI, functionName: "getIncomingDelegations", data: raw });
}

/** Whether `asset` says it is an ERC-721 (ERC-165) at `block`; a contract without ERC-165 is not. */
async function supportsErc721(reader: Pick<Reader, "callAt">, asset: string, block: bigint): Promise<boolean> {
  const [answer] = await tryCalls(reader, block, [
    {
      target: asset,
      callData: encodeFunctionData({ abi: SUPPORTS_INTERFACE_ABI, functionName: "supportsInterface", args: [ERC721_INTERFACE_ID] }),
    },
  ]);
  return answer !== undefined && answer.length === 66 && BigInt(answer) === 1n;
}

/** Each token's `ownerOf` at `block`, one Multicall3 call; a token without owner (its call reverts) is undefined. */
async function ownersOf(reader: Pick<Reader, "callAt">, asset: string, ids: bigint[], block: bigint): Promise<Array<string | undefined>> {
  if (ids.length === 0) return [];
  const answers = await tryCalls(
    reader,
    block,
    ids.map((id) => ({ target: asset, callData: encodeFunctionData({ abi: OWNER_OF_ABI, functionName: "ownerOf", args: [id] }) })),
  );
  return answers.map((answer) =>
    answer !== undefined && answer.length === 66
      ? getAddress(decodeFunctionResult({ abi: OWNER_OF_ABI, functionName: "ownerOf", data: answer }))
      : undefined,
  );
}

/** The calls through Multicall3's `aggregate3` at `block`, each allowed to fail (undefined). */
async function tryCalls(
  reader: Pick<Reader, "callAt">,
  block: bigint,
  calls: Array<{ target: string; callData: Hex }>,
): Promise<Array<Hex | undefined>> {
  const data = encodeFunctionData({
    abi: AGGREGATE3_ABI,
    functionName: "aggregate3",
    args: [calls.map(({ target, callData }) => ({ target: getAddress(target), allowFailure: true, callData }))],
  });
  const raw = (await reader.callAt(MULTICALL3_ADDRESS, data, block)) as Hex;
  return decodeFunctionResult({ abi: AGGREGATE3_ABI, functionName: "aggregate3", data: raw }).map(({ success, returnData }) =>
    success ? returnData : undefined,
  );
}
