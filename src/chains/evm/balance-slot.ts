import { toQuantity } from "ethers";
import { encodeAbiParameters, encodeFunctionData, keccak256, parseAbi, toHex, type Hex } from "viem";

import { balanceSlotKey } from "./balance-proof.ts";

/** What slot discovery needs of a JSON-RPC client (JsonRpcPool has it). */
export interface JsonRpc {
  request<T>(method: string, params: unknown[]): Promise<T>;
}

/** Where a token keeps `owner`'s balance: the mapping's base slot and the owner's key in it. */
export interface BalancesSlot {
  balancesSlot: bigint;
  /** `keccak256(abi.encode(owner, balancesSlot))`: the storage key that holds the balance. */
  key: Hex;
}

const BALANCE_OF_ABI = parseAbi(["function balanceOf(address owner) view returns (uint256)"]);

/** Plain Solidity layouts: a `mapping(address => uint256)` declared among a contract's first 256 slots. */
const PLAIN_SLOTS = 256n;

/** The ERC-7201 base of a namespace: `keccak256(abi.encode(uint256(keccak256(namespace)) - 1)) & ~bytes32(uint256(0xff))`. */
export function erc7201Base(namespace: string): bigint {
  const inner = BigInt(keccak256(toHex(namespace))) - 1n;
  return BigInt(keccak256(encodeAbiParameters([{ type: "uint256" }], [inner]))) & ~0xffn;
}

/**
 * The `_balances` mappings of OpenZeppelin's upgradeable tokens (v5, ERC-7201 namespaced storage):
 * `ERC20Storage._balances` is the struct's first member; `ERC721Storage` has `_name`, `_symbol` and
 * `_owners` before it, so `_balances` is the namespace's base + 3.
 */
export const NAMESPACED_BALANCES_SLOTS: readonly bigint[] = [
  erc7201Base("openzeppelin.storage.ERC20"),
  erc7201Base("openzeppelin.storage.ERC721") + 3n,
];

/** The candidate mapping slots, in the order they are tried: 0..255, then the namespaced ones. */
const CANDIDATE_SLOTS: readonly bigint[] = [
  ...Array.from({ length: Number(PLAIN_SLOTS) }, (_, slot) => BigInt(slot)),
  ...NAMESPACED_BALANCES_SLOTS,
];

/**
 * The tokens whose balances slot was found and checked against a balance other than zero. Bounded: past
 * `maxTokens` the token found longest ago is forgotten (it is found again when asked).
 */
export class BalancesSlotCache {
  readonly #slots = new Map<string, bigint>();
  readonly #maxTokens: number;

  constructor(maxTokens = 10_000) {
    this.#maxTokens = maxTokens;
  }

  get(token: string): bigint | undefined {
    return this.#slots.get(token.toLowerCase());
  }

  set(token: string, balancesSlot: bigint): void {
    const key = token.toLowerCase();
    this.#slots.delete(key);
    this.#slots.set(key, balancesSlot);
    if (this.#slots.size > this.#maxTokens) this.#slots.delete(this.#slots.keys().next().value!);
  }
}

export interface BalancesSlotQuery {
  token: string;
  owner: string;
  blockNumber: bigint;
  /** `balanceOf(owner)` at `blockNumber` when the caller has read it already; read here otherwise. */
  balance?: bigint;
}

/**
 * Finds where `token` keeps `owner`'s balance, with no per-token configuration: the storage keys a
 * `balanceOf(owner)` call reads at the token's address (`eth_createAccessList` at `blockNumber`; a
 * proxy's storage is at the proxy's address) are matched against `keccak256(abi.encode(owner, i))` for
 * the candidate mapping slots `i` (0..255, and OpenZeppelin's ERC-7201 `_balances` of ERC-20 and
 * ERC-721); a match is then checked by reading the slot back (`eth_getStorageAt`), which must equal the
 * balance. Undefined when no candidate both matches and holds the balance: the balance is not a mapping
 * keyed by the owner (rebasing tokens, balances computed from shares, other layouts).
 *
 * With `cache`, a slot checked against a balance other than zero is remembered per token (a token's layout
 * does not change) and tried first, still read back each time. A zero balance proves nothing (shares of 0
 * are a balance of 0 at any index), so it is never what a token's slot is remembered from.
 */
export async function findBalancesSlot(
  rpc: JsonRpc,
  query: BalancesSlotQuery,
  cache?: BalancesSlotCache,
): Promise<BalancesSlot | undefined> {
  const { token, owner, blockNumber } = query;
  const block = toQuantity(blockNumber);
  const balance = query.balance ?? (await readBalance(rpc, token, owner, block));
  const cached = cache?.get(token);
  if (cached !== undefined) {
    const key = balanceSlotKey(owner, cached);
    if ((await readSlot(rpc, token, key, block)) === balance) return { balancesSlot: cached, key };
  }
  const data = encodeFunctionData({ abi: BALANCE_OF_ABI, functionName: "balanceOf", args: [owner as Hex] });
  const { accessList } = await rpc.request<{ accessList: { address: string; storageKeys: string[] }[] }>("eth_createAccessList", [
    { to: token, data },
    block,
  ]);
  const read = new Set(
    accessList
      .filter(({ address }) => address.toLowerCase() === token.toLowerCase())
      .flatMap(({ storageKeys }) => storageKeys.map((key) => key.toLowerCase())),
  );
  if (read.size === 0) return undefined;
  for (const balancesSlot of CANDIDATE_SLOTS) {
    const key = balanceSlotKey(owner, balancesSlot);
    if (!read.has(key.toLowerCase())) continue;
    if ((await readSlot(rpc, token, key, block)) !== balance) continue;
    if (balance !== 0n) cache?.set(token, balancesSlot);
    return { balancesSlot, key };
  }
  return undefined;
}

async function readBalance(rpc: JsonRpc, token: string, owner: string, block: string): Promise<bigint> {
  const data = encodeFunctionData({ abi: BALANCE_OF_ABI, functionName: "balanceOf", args: [owner as Hex] });
  const word = await rpc.request<string>("eth_call", [{ to: token, data }, block]);
  if (!/^0x[0-9a-fA-F]{64}$/.test(word)) throw new TypeError(`balanceOf at ${token} did not answer one 32-byte word`);
  return BigInt(word);
}

async function readSlot(rpc: JsonRpc, token: string, key: Hex, block: string): Promise<bigint> {
  return BigInt(await rpc.request<string>("eth_getStorageAt", [token, key, block]));
}
