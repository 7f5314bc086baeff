import { conditionLeaves, evaluateCondition, leafHolds, type ConditionLeaf, type ConditionRequest } from "@avn/protocol/conditions";

import type { EvmBalanceReader } from "./evm/balance-reader.ts";
import { delegatedBalanceOf, type DelegationReads } from "./evm/delegated-balance.ts";
import type { SolanaBalanceReader } from "./solana/balance-reader.ts";

/**
 * Readers pinned to a position: `PinnedReaders` (the hub's and the node's), or `headSources` over the
 * plain readers. Every Ethereum leaf is read at one block and every Solana leaf at one minimum slot, so a
 * verdict is a statement about two positions, which the signed struct names.
 */
export interface ConditionSources {
  /** Balances at `block`, and the calls a leaf counting delegations makes there (delegated-balance.ts). */
  evmAt(block: bigint): Pick<EvmBalanceReader, "balanceOf" | "callAt">;
  /** A condition's Solana leaves are read together: one owner, every mint at once. */
  solanaFrom(slot: bigint): Pick<SolanaBalanceReader, "balancesOf">;
}

/** The positions a condition is read at: 0 for a chain none of its leaves is on. */
export interface ConditionPositions {
  ethereumBlock: bigint;
  solanaSlot: bigint;
}

/** One leaf as read: its raw `balanceOf`, the QueryResult as the balance routes write it, whether it holds. */
export interface LeafReading {
  leaf: ConditionLeaf;
  balance: bigint;
  /** Ethereum: `0x` + the 32-byte word; Solana: the accounts' data in lower-case hex without `0x`. */
  queryResult: string;
  holds: boolean;
}

export interface ConditionReading {
  verdict: boolean;
  /** In order of appearance (`conditionLeaves`). */
  leaves: LeafReading[];
}

/** The chains a condition's leaves are on. */
export function chainsOf(condition: ConditionRequest["condition"]): { ethereum: boolean; solana: boolean } {
  const leaves = conditionLeaves(condition);
  return { ethereum: leaves.some((leaf) => leaf.chain === "ethereum"), solana: leaves.some((leaf) => leaf.chain === "solana") };
}

/**
 * Reads every leaf of `request`'s condition for its owners at `positions`, one batch per chain (the
 * Ethereum leaves in one Multicall3 call, which the reader coalesces; the Solana leaves all at once,
 * `balancesOf`), and evaluates the verdict. A leaf with `delegations` counts the delegating wallets'
 * holdings too, read at the same block (delegated-balance.ts). An asset that is not there rejects with the reader's
 * `AssetNotFoundError`: a missing token is not a zero balance.
 */
export async function readCondition(
  request: Pick<ConditionRequest, "owners" | "condition">,
  sources: ConditionSources,
  positions: ConditionPositions,
): Promise<ConditionReading> {
  const leaves = conditionLeaves(request.condition);
  const solanaMints = leaves.flatMap((leaf) => (leaf.chain === "solana" ? [leaf.token_mint_address] : []));
  const solana =
    solanaMints.length === 0
      ? new Map<string, { balance: bigint; queryResult: string }>()
      : sources.solanaFrom(positions.solanaSlot).balancesOf(ownerOf(request, "solana"), solanaMints);
  const delegationReads: DelegationReads = new Map();
  const reads = await Promise.all(
    leaves.map(async (leaf) => {
      if (leaf.chain === "solana") return (await solana).get(leaf.token_mint_address)!;
      const evm = sources.evmAt(positions.ethereumBlock);
      const owner = ownerOf(request, "ethereum");
      return leaf.delegations === true
        ? delegatedBalanceOf(evm, leaf.contract_address, owner, positions.ethereumBlock, tokenIdOf(leaf), delegationReads)
        : evm.balanceOf(leaf.contract_address, owner, undefined, tokenIdOf(leaf));
    }),
  );
  return conditionReading(request.condition, reads);
}

/**
 * The reading of `condition` from each leaf's read, in the order of `conditionLeaves`: whether each leaf holds,
 * and the verdict. Whoever read them (this API, or a node whose readings came with its signature).
 */
export function conditionReading(
  condition: ConditionRequest["condition"],
  reads: ReadonlyArray<{ balance: bigint; queryResult: string }>,
): ConditionReading {
  const leaves = conditionLeaves(condition).map((leaf, index): LeafReading => ({
    leaf,
    balance: reads[index].balance,
    queryResult: reads[index].queryResult,
    holds: leafHolds(leaf, reads[index].balance),
  }));
  return {
    verdict: evaluateCondition(
      condition,
      leaves.map((reading) => reading.holds),
    ),
    leaves,
  };
}

/** Sources over the plain readers: each Ethereum read names its block, each Solana read its minimum slot. */
export function headSources(
  evm: Pick<EvmBalanceReader, "balanceOf" | "callAt">,
  solana: Pick<SolanaBalanceReader, "balancesOf">,
): ConditionSources {
  return {
    evmAt: (block) => ({
      balanceOf: (asset, owner, _block, tokenId) => evm.balanceOf(asset, owner, block, tokenId),
      callAt: (to, data) => evm.callAt(to, data, block),
    }),
    solanaFrom: (slot) => ({ balancesOf: (owner, mints) => solana.balancesOf(owner, mints, { minContextSlot: slot }) }),
  };
}

function ownerOf(request: Pick<ConditionRequest, "owners">, chain: "ethereum" | "solana"): string {
  const owner = request.owners[chain];
  // parseConditionRequest refuses a leaf whose chain has no owner; this guards callers that skipped it.
  if (owner === undefined) throw new TypeError(`a ${chain} leaf needs owners.${chain}`);
  return owner;
}

function tokenIdOf(leaf: ConditionLeaf): bigint | undefined {
  return leaf.chain === "ethereum" && leaf.token_id !== undefined ? BigInt(leaf.token_id) : undefined;
}
