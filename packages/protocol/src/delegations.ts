import { getAddress, parseAbi, zeroHash, type Address, type Hex } from "viem";

/**
 * delegate.xyz v2 (docs/conditions.md, "Delegations"): a cold wallet's own on-chain statement that a hot
 * wallet may act for it. With `include_delegations` (ccq-evm) or `"delegations": true` (an Ethereum condition
 * leaf), a holding counts the hot wallet's own balance and what the wallets that delegated to it hold, read at
 * the same block. Only delegations with empty `rights` count: the full-rights default, not a right scoped to
 * some use.
 */

/** DelegateRegistry v2, at the same address on every chain (CREATE2). */
export const DELEGATE_REGISTRY_ADDRESS = "0x00000000000000447e69651d841bD8D104Bed493";

/**
 * The most wallets delegating to one owner for one asset that an answer reads, and the most ERC-721 token
 * delegations it checks. Anyone can delegate to any wallet (only the delegating wallet can revoke), so an owner
 * may be sent delegations by wallets that hold nothing: each is read, and only those lending something are
 * counted. Beyond these, the answer is refused (422), never cut short.
 */
export const MAX_DELEGATING_WALLETS = 1_000;
export const MAX_DELEGATED_TOKENS = 1_000;

/** `IDelegateRegistry.DelegationType`. */
export const DelegationType = { NONE: 0, ALL: 1, CONTRACT: 2, ERC721: 3, ERC20: 4, ERC1155: 5 } as const;

/** The part of `IDelegateRegistry` (v2) the network reads and the demos and tests write. */
export const DELEGATE_REGISTRY_ABI = parseAbi([
  "struct Delegation { uint8 type_; address to; address from; bytes32 rights; address contract_; uint256 tokenId; uint256 amount; }",
  "function getIncomingDelegations(address to) view returns (Delegation[] delegations)",
  "function delegateAll(address to, bytes32 rights, bool enable) payable returns (bytes32 delegationHash)",
  "function delegateContract(address to, address contract_, bytes32 rights, bool enable) payable returns (bytes32 delegationHash)",
  "function delegateERC721(address to, address contract_, uint256 tokenId, bytes32 rights, bool enable) payable returns (bytes32 delegationHash)",
  "function delegateERC20(address to, address contract_, bytes32 rights, uint256 amount) payable returns (bytes32 delegationHash)",
  "function delegateERC1155(address to, address contract_, uint256 tokenId, bytes32 rights, uint256 amount) payable returns (bytes32 delegationHash)",
  "function checkDelegateForAll(address to, address from, bytes32 rights) view returns (bool)",
]);

/** One delegation as `getIncomingDelegations` returns it (revoked ones are not returned). */
export interface Delegation {
  type_: number;
  to: Address;
  from: Address;
  rights: Hex;
  contract_: Address;
  tokenId: bigint;
  amount: bigint;
}

/** What one delegating wallet lends a holding of one asset: all of it, at most an amount, or some ERC-721 tokens. */
export interface DelegatedShare {
  from: Address;
  /** Its whole balance of the asset counts (an `ALL` or `CONTRACT` delegation). */
  whole: boolean;
  /** ERC-20 (or, for an id, ERC-1155) amount delegations: at most this much of its balance counts, for a fungible token. */
  amount: bigint;
  /** ERC-721 token delegations: each of these it still owns counts as one, for an ERC-721 token. */
  tokenIds: bigint[];
}

/**
 * Which wallets delegated to `owner` for `asset` (and, for an ERC-1155 balance, `tokenId`), and what each
 * lends, from the owner's incoming delegations: empty `rights` only; the owner itself and wallets whose
 * delegations do not name this asset are left out. In the order the registry lists them, one entry per wallet.
 */
export function delegatedShares(delegations: readonly Delegation[], owner: string, asset: string, tokenId?: bigint): DelegatedShare[] {
  const [ownerKey, assetKey] = [getAddress(owner), getAddress(asset)];
  const shares = new Map<Address, DelegatedShare>();
  for (const delegation of delegations) {
    if (delegation.rights !== zeroHash || getAddress(delegation.to) !== ownerKey) continue;
    const from = getAddress(delegation.from);
    if (from === ownerKey) continue;
    const onAsset = getAddress(delegation.contract_) === assetKey;
    const share = () => {
      let existing = shares.get(from);
      if (existing === undefined) shares.set(from, (existing = { from, whole: false, amount: 0n, tokenIds: [] }));
      return existing;
    };
    switch (delegation.type_) {
      case DelegationType.ALL:
        share().whole = true;
        break;
      case DelegationType.CONTRACT:
        if (onAsset) share().whole = true;
        break;
      case DelegationType.ERC721:
        if (onAsset && tokenId === undefined) share().tokenIds.push(delegation.tokenId);
        break;
      case DelegationType.ERC20:
        if (onAsset && tokenId === undefined) share().amount += delegation.amount;
        break;
      case DelegationType.ERC1155:
        if (onAsset && tokenId !== undefined && delegation.tokenId === tokenId) share().amount += delegation.amount;
        break;
    }
  }
  return [...shares.values()];
}

/**
 * How much of `balance` a share lends: all of it; else, as delegate.xyz's own checks read them, for an ERC-721
 * token its tokens still owned (`owned`; its amount delegations mean nothing there), and for a fungible one (an
 * ERC-20, or an ERC-1155 id) its amount (its token delegations mean nothing there). Never more than `balance`.
 */
export function lentBalance(share: DelegatedShare, balance: bigint, asset: { erc721: boolean; owned: number }): bigint {
  if (share.whole) return balance;
  const lent = asset.erc721 ? BigInt(asset.owned) : share.amount;
  return lent < balance ? lent : balance;
}
