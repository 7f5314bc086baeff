import { encodeAbiParameters, keccak256, toRlp, type Hex } from "viem";

import { SourceError } from "../rpc/errors.ts";

/**
 * A block as `eth_getBlockByNumber` returns it: the header fields, hex strings. The fields after `nonce`
 * came with later forks (London: `baseFeePerGas`; Shanghai: `withdrawalsRoot`; Cancun: `blobGasUsed`,
 * `excessBlobGas`, `parentBeaconBlockRoot`; Prague: `requestsHash`); a block has those of its fork.
 */
export interface RpcBlock {
  hash: Hex;
  parentHash: Hex;
  sha3Uncles: Hex;
  miner: Hex;
  stateRoot: Hex;
  transactionsRoot: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  difficulty: Hex;
  number: Hex;
  gasLimit: Hex;
  gasUsed: Hex;
  timestamp: Hex;
  extraData: Hex;
  mixHash: Hex;
  nonce: Hex;
  baseFeePerGas?: Hex | null;
  withdrawalsRoot?: Hex | null;
  blobGasUsed?: Hex | null;
  excessBlobGas?: Hex | null;
  parentBeaconBlockRoot?: Hex | null;
  requestsHash?: Hex | null;
}

/** What the proof builder needs of a JSON-RPC client: `JsonRpcPool` has it, and so does an adapter over ethers' `provider.send`. */
export interface ProofRpc {
  request<T>(method: string, params: unknown[]): Promise<T>;
}

/** A balance slot's proof at an L1 block, ready for `StorageProofVerifier.verifyBalance`. */
export interface BalanceProof {
  blockNumber: bigint;
  blockHash: Hex;
  balancesSlot: bigint;
  /** `keccak256(abi.encode(owner, balancesSlot))`: the slot proven. */
  storageKey: Hex;
  /** The slot's value: the balance (0 when the slot was never written; Bedrock's trie cannot prove that). */
  value: bigint;
  /** `abi.encode(BalanceProof{header, accountProof, storageProof})`: `verifyBalance`'s `proof` argument. */
  encoded: Hex;
}

/** The header could not be rebuilt to the block's hash, or the node's proof does not fit the query. */
export class BalanceProofError extends SourceError {}

/** `eth_getProof`'s answer, the parts used. */
interface RpcAccountProof {
  accountProof: Hex[];
  storageProof: Array<{ key: Hex; value: Hex; proof: Hex[] }>;
}

/** The header fields in RLP order, and whether each is a quantity (an integer: minimal bytes) or raw bytes. */
const HEADER_FIELDS: Array<[keyof RpcBlock, "quantity" | "bytes"]> = [
  ["parentHash", "bytes"],
  ["sha3Uncles", "bytes"],
  ["miner", "bytes"],
  ["stateRoot", "bytes"],
  ["transactionsRoot", "bytes"],
  ["receiptsRoot", "bytes"],
  ["logsBloom", "bytes"],
  ["difficulty", "quantity"],
  ["number", "quantity"],
  ["gasLimit", "quantity"],
  ["gasUsed", "quantity"],
  ["timestamp", "quantity"],
  ["extraData", "bytes"],
  ["mixHash", "bytes"],
  ["nonce", "bytes"],
];

/** The fork fields, in order: a block has a prefix of them (none before London). */
const FORK_FIELDS: Array<[keyof RpcBlock, "quantity" | "bytes"]> = [
  ["baseFeePerGas", "quantity"],
  ["withdrawalsRoot", "bytes"],
  ["blobGasUsed", "quantity"],
  ["excessBlobGas", "quantity"],
  ["parentBeaconBlockRoot", "bytes"],
  ["requestsHash", "bytes"],
];

const BALANCE_PROOF_PARAMETERS = [
  {
    type: "tuple",
    components: [
      { name: "header", type: "bytes" },
      { name: "accountProof", type: "bytes[]" },
      { name: "storageProof", type: "bytes[]" },
    ],
  },
] as const;

/** An RLP integer: big-endian without leading zero bytes, zero as the empty string. */
function quantityBytes(quantity: Hex): Hex {
  const value = BigInt(quantity);
  if (value === 0n) return "0x";
  const hex = value.toString(16);
  return `0x${hex.length % 2 === 0 ? hex : `0${hex}`}`;
}

/** RLP of a block header as eth_getBlockByNumber returns it (pre-London to Cancun/Prague fields, whichever the block has), whose keccak is the block's hash. */
export function encodeBlockHeader(block: RpcBlock): Hex {
  const fields: Hex[] = HEADER_FIELDS.map(([name, kind]) => {
    const value = block[name] as Hex;
    return kind === "quantity" ? quantityBytes(value) : value;
  });
  // A fork's fields follow those of the forks before it; the first one absent ends the header.
  for (const [name, kind] of FORK_FIELDS) {
    const value = block[name];
    if (value === undefined || value === null) break;
    fields.push(kind === "quantity" ? quantityBytes(value) : value);
  }
  const header = toRlp(fields);
  const hash = keccak256(header);
  if (hash.toLowerCase() !== block.hash.toLowerCase()) {
    throw new BalanceProofError(
      `block ${BigInt(block.number)}: the rebuilt header hashes to ${hash}, not the block's hash ${block.hash} (a header format this code does not know)`,
    );
  }
  return header;
}

/** The storage key of `owner`'s entry in a `mapping(address => uint256)` at `balancesSlot`: `keccak256(abi.encode(owner, slot))`. */
export function balanceSlotKey(owner: string, balancesSlot: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [owner as Hex, balancesSlot]));
}

/** eth_getProof of the owner's balance slot at `blockNumber` and the block's header, ABI-encoded as verifyBalance takes it; `value` is the slot's value (0 when not written: then Bedrock's trie cannot prove it, see verifyBalance). */
export async function buildBalanceProof(
  rpc: ProofRpc,
  query: { token: string; owner: string; balancesSlot: bigint; blockNumber: bigint },
): Promise<BalanceProof> {
  const storageKey = balanceSlotKey(query.owner, query.balancesSlot);
  const blockTag = `0x${query.blockNumber.toString(16)}`;
  const [block, proof] = await Promise.all([
    rpc.request<RpcBlock | null>("eth_getBlockByNumber", [blockTag, false]),
    rpc.request<RpcAccountProof>("eth_getProof", [query.token, [storageKey], blockTag]),
  ]);
  if (block === null) throw new BalanceProofError(`block ${query.blockNumber} is not known to the RPC`);
  const header = encodeBlockHeader(block);
  const slot = proof.storageProof[0];
  if (proof.storageProof.length !== 1 || BigInt(slot.key) !== BigInt(storageKey)) {
    throw new BalanceProofError(`eth_getProof answered for another storage key than ${storageKey}`);
  }
  const encoded = encodeAbiParameters(BALANCE_PROOF_PARAMETERS, [{ header, accountProof: proof.accountProof, storageProof: slot.proof }]);
  return {
    blockNumber: query.blockNumber,
    blockHash: block.hash,
    balancesSlot: query.balancesSlot,
    storageKey,
    value: BigInt(slot.value),
    encoded,
  };
}
