import { toQuantity } from "ethers";
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from "viem";

import type { EvmBalanceReader } from "../../chains/evm/balance-reader.ts";
import { buildBalanceProof, HISTORY_SERVE_WINDOW } from "../../chains/evm/balance-proof.ts";
import { BalancesSlotCache, findBalancesSlot, type JsonRpc } from "../../chains/evm/balance-slot.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { ApiError } from "../api-error.ts";
import { DELEGATIONS_NOT_PROVABLE, type EvmQuery } from "./chains.ts";
import type { BalanceProofSources } from "./dependencies.ts";
import type { BalanceProofJson } from "./proof-schema.ts";

// `POST /api/ccq-evm?proof=true` (docs/proofs.md): the balance read at the L1 block the L2's L1Block
// predeploy knows (or at `block_number`, one of the 8,191 blocks before it), with the Merkle proof of its
// storage slot that StorageProofVerifier.verifyBalance checks against that block's hash on the L2: an
// inclusion proof of the balance, or an exclusion proof of a balance of 0.

export const PROOF_WITH_ATTEST = "proof and attest cannot be asked together: ask for one of them";
export const PROOF_NOT_SUPPORTED_ON_BATCH = "proof is not supported on batch requests";
export const TOKEN_ID_NOT_PROVABLE = "token_id cannot be proven: storage proofs are offered for ERC-20 and ERC-721 balances only";
export const PROOFS_NOT_CONFIGURED =
  "Storage proofs are not enabled on this server: configure PROOF_L2_RPC_URL (or ATTESTATION_L2_RPC_URL), the rollup whose L1Block names the Ethereum block";
export const PROOF_SOURCE_NOT_L1 =
  "Storage proofs are offered only when the API's Ethereum source is the rollup's own L1: the block the L2's L1Block names is not on this server's Ethereum source";
export const BLOCK_AFTER_KNOWN = (asked: bigint, known: bigint) =>
  `block_number ${asked} is after ${known}, the latest Ethereum block the rollup knows: ask again later, or without block_number`;
export const BLOCK_BEYOND_HISTORY = (asked: bigint, known: bigint) =>
  `block_number ${asked} is more than ${HISTORY_SERVE_WINDOW} blocks before ${known}, the Ethereum block the rollup knows: ` +
  `EIP-2935's history contract keeps the hashes of the last ${HISTORY_SERVE_WINDOW} blocks only`;
export const BALANCE_NOT_A_MAPPING =
  "This token's balance is not a mapping keyed by the owner (a rebasing token, a balance computed from shares, or another storage layout): no storage proof can show it";

export interface ProvedAnswer {
  balance: bigint;
  queryResult: string;
  /** An inclusion proof of the balance, or an exclusion proof when it is 0 (an unwritten or cleared slot). */
  proof: BalanceProofJson;
}

/** What the EVM balance route needs for `?proof=true`. */
export interface BalanceProver<Query> {
  /** Why `query` cannot have a proof (a 400, whether proofs are configured or not), or undefined. */
  unprovable(query: Query): string | undefined;
  /** The balance at the L2's L1 block and its proof; throws the 501 without configuration. */
  prove(query: Query): Promise<ProvedAnswer>;
}

const L1_BLOCK_ABI = parseAbi(["function number() view returns (uint64)", "function hash() view returns (bytes32)"]);

/** `?proof=true` over `sources` (undefined: every proof request answers 501) and the API's balance reader. */
export function evmBalanceProver(sources: BalanceProofSources | undefined, reader: EvmBalanceReader): BalanceProver<EvmQuery> {
  const slots = new BalancesSlotCache();
  return {
    unprovable: ({ tokenId, delegations }) =>
      delegations ? DELEGATIONS_NOT_PROVABLE : tokenId === undefined ? undefined : TOKEN_ID_NOT_PROVABLE,
    async prove({ owner, asset, blockNumber: asked }) {
      if (sources === undefined) throw new ApiError(501, PROOFS_NOT_CONFIGURED);
      const { l2, ethereum } = sources;
      // Both read at one L2 block: a new L1 origin between two reads would pair a number with another hash.
      const l2Block = await l2.request<string>("eth_blockNumber", []);
      const known = await provableBlock(l2, l2Block, sources.l1BlockHashes);
      const block = await ethereum.request<{ hash: string } | null>("eth_getBlockByNumber", [toQuantity(known.blockNumber), false]);
      if (block?.hash.toLowerCase() !== known.blockHash.toLowerCase()) throw new ApiError(501, PROOF_SOURCE_NOT_L1);
      const blockNumber = asked ?? known.blockNumber;
      if (blockNumber > known.blockNumber) throw new ApiError(422, BLOCK_AFTER_KNOWN(blockNumber, known.blockNumber));
      if (known.blockNumber - blockNumber > HISTORY_SERVE_WINDOW)
        throw new ApiError(422, BLOCK_BEYOND_HISTORY(blockNumber, known.blockNumber));
      const read = await reader.balanceOf(asset, owner, blockNumber);
      const found = await findBalancesSlot(ethereum, { token: asset, owner, blockNumber, balance: read.balance }, slots);
      if (found === undefined) throw new ApiError(422, BALANCE_NOT_A_MAPPING);
      const proof = await buildBalanceProof(ethereum, {
        token: asset,
        owner,
        balancesSlot: found.balancesSlot,
        blockNumber,
        anchorBlockNumber: known.blockNumber,
      });
      // The slot was read back at this block; a differing proof means the source changed under us.
      const provenHash = (proof.anchor ?? proof).blockHash;
      if (provenHash.toLowerCase() !== known.blockHash.toLowerCase() || proof.value !== read.balance)
        throw new ApiError(503, "The Ethereum source changed while the proof was built: try again", { "retry-after": "1" });
      return {
        balance: read.balance,
        queryResult: read.queryResult,
        proof: {
          blockNumber,
          blockHash: proof.blockHash.toLowerCase(),
          ...(proof.anchor === undefined ? {} : { anchorBlockNumber: proof.anchor.blockNumber }),
          balancesSlot: found.balancesSlot.toString(),
          included: proof.value !== 0n,
          encoded: proof.encoded,
        },
      };
    },
  };
}

/**
 * The most L1 blocks a recorded block may be behind `L1Block`'s current one to be preferred: a keeper that
 * records every block or two keeps within it; one that stopped does not make proofs old.
 */
export const MAX_RECORDED_LAG = 32n;

/**
 * The L1 block a proof names. `L1Block`'s current block verifies only while it is current (until the next
 * L1 block reaches the L2: 12 s on Ethereum, 2 s on the devnet), too short for a proof sent in a later
 * transaction; a block recorded in `L1BlockHashes` verifies for as long as the caller's `maxAge` allows.
 * So the latest recorded block is preferred when it is recent, and the current one answers otherwise.
 */
async function provableBlock(
  l2: JsonRpc,
  l2Block: string,
  l1BlockHashes: string | undefined,
): Promise<{ blockNumber: bigint; blockHash: Hex }> {
  const [number, hash, recorded] = await Promise.all([
    readL1Block(l2, l2Block, "number") as Promise<bigint>,
    readL1Block(l2, l2Block, "hash") as Promise<Hex>,
    l1BlockHashes === undefined ? undefined : readLatestRecord(l2, l2Block, l1BlockHashes),
  ]);
  if (recorded !== undefined && recorded.number > 0n && recorded.number + MAX_RECORDED_LAG >= number)
    return { blockNumber: recorded.number, blockHash: recorded.hash };
  return { blockNumber: number, blockHash: hash };
}

const L1_BLOCK_HASHES_ABI = parseAbi(["function latest() view returns (uint64 number, bytes32 hash, uint64 timestamp)"]);

/** `L1BlockHashes.latest()` at the L2 block `l2Block`. */
async function readLatestRecord(l2: JsonRpc, l2Block: string, address: string): Promise<{ number: bigint; hash: Hex }> {
  const data = encodeFunctionData({ abi: L1_BLOCK_HASHES_ABI, functionName: "latest" });
  const raw = await l2.request<Hex>("eth_call", [{ to: address, data }, l2Block]);
  const [number, hash] = decodeFunctionResult({ abi: L1_BLOCK_HASHES_ABI, functionName: "latest", data: raw });
  return { number, hash };
}

/** `L1Block.number()` or `hash()` at the L2 block `l2Block` (a quantity). */
async function readL1Block(l2: JsonRpc, l2Block: string, functionName: "number" | "hash"): Promise<bigint | Hex> {
  const data = encodeFunctionData({ abi: L1_BLOCK_ABI, functionName });
  const raw = await l2.request<Hex>("eth_call", [{ to: L2_PREDEPLOYS.L1Block, data }, l2Block]);
  return decodeFunctionResult({ abi: L1_BLOCK_ABI, functionName, data: raw });
}
