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

/** Storage slots' proof at an L1 block, ready for `StorageProofVerifier.verifyStorage` (or `verifyBalance(s)`). */
export interface StorageProofBundle {
  /** The L1 block proven at. */
  blockNumber: bigint;
  blockHash: Hex;
  /** With a history proof: the block the L2 knows, whose EIP-2935 history contract proves `blockHash`. */
  anchor?: { blockNumber: bigint; blockHash: Hex };
  /** The slots' values, in the order asked (0 for a slot absent from the trie). */
  values: bigint[];
  /** `abi.encode(StorageProof)`: the verifier's `proof` argument. */
  encoded: Hex;
}

/** A balance slot's proof at an L1 block, ready for `StorageProofVerifier.verifyBalance`. */
export interface BalanceProof extends Omit<StorageProofBundle, "values"> {
  balancesSlot: bigint;
  /** `keccak256(abi.encode(owner, balancesSlot))`: the slot proven. */
  storageKey: Hex;
  /** The slot's value: the balance (0 when the slot was never written: an exclusion proof). */
  value: bigint;
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

/** EIP-2935's history contract: slot `b % 8191` holds block `b`'s hash while `b` is among the last 8,191 blocks. */
export const HISTORY_CONTRACT: Hex = "0x0000F90827F1C53a10cb7A02335B175320002935";
export const HISTORY_SERVE_WINDOW = 8191n;

/** `IStorageProofVerifier.StorageProof`. */
const STORAGE_PROOF_PARAMETERS = [
  {
    type: "tuple",
    components: [
      { name: "header", type: "bytes" },
      { name: "accountProof", type: "bytes[]" },
      {
        name: "slotProofs",
        type: "tuple[]",
        components: [
          { name: "included", type: "bool" },
          { name: "nodes", type: "bytes[]" },
        ],
      },
      {
        name: "history",
        type: "tuple",
        components: [
          { name: "anchorHeader", type: "bytes" },
          { name: "accountProof", type: "bytes[]" },
          { name: "slotProof", type: "bytes[]" },
        ],
      },
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
  const header = headerRlp(block);
  const hash = keccak256(header);
  if (hash.toLowerCase() !== block.hash.toLowerCase()) {
    throw new BalanceProofError(
      `block ${BigInt(block.number)}: the rebuilt header hashes to ${hash}, not the block's hash ${block.hash} (a header format this code does not know)`,
    );
  }
  return header;
}

/** RLP of a header's fields, unchecked: `encodeBlockHeader` checks it against the block's hash; benchmarks alter fields. */
export function headerRlp(block: Omit<RpcBlock, "hash">): Hex {
  const fields: Hex[] = HEADER_FIELDS.map(([name, kind]) => {
    const value = block[name as keyof typeof block] as Hex;
    return kind === "quantity" ? quantityBytes(value) : value;
  });
  // A fork's fields follow those of the forks before it; the first one absent ends the header.
  for (const [name, kind] of FORK_FIELDS) {
    const value = block[name as keyof typeof block];
    if (value === undefined || value === null) break;
    fields.push(kind === "quantity" ? quantityBytes(value) : value);
  }
  return toRlp(fields);
}

/** The storage key of `owner`'s entry in a `mapping(address => uint256)` at `balancesSlot`: `keccak256(abi.encode(owner, slot))`. */
export function balanceSlotKey(owner: string, balancesSlot: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [owner as Hex, balancesSlot]));
}

/** A 32-byte storage key, as the verifier and `eth_getProof` take it. */
function slotWord(slot: bigint): Hex {
  return `0x${slot.toString(16).padStart(64, "0")}`;
}

/** The block and the account's proof of `slots` at it, checked against what was asked. */
async function readProof(
  rpc: ProofRpc,
  account: string,
  slots: readonly Hex[],
  blockNumber: bigint,
): Promise<{ block: RpcBlock; header: Hex; proof: RpcAccountProof }> {
  const blockTag = `0x${blockNumber.toString(16)}`;
  const [block, proof] = await Promise.all([
    rpc.request<RpcBlock | null>("eth_getBlockByNumber", [blockTag, false]),
    rpc.request<RpcAccountProof>("eth_getProof", [account, slots, blockTag]),
  ]);
  if (block === null) throw new BalanceProofError(`block ${blockNumber} is not known to the RPC`);
  if (proof.storageProof.length !== slots.length || proof.storageProof.some(({ key }, i) => BigInt(key) !== BigInt(slots[i]))) {
    throw new BalanceProofError(`eth_getProof answered for other storage keys than ${slots.join(", ")}`);
  }
  return { block, header: encodeBlockHeader(block), proof };
}

/** `IStorageProofVerifier.HistoryProof`: how an anchor block proves an older block's hash (empty: no history). */
export interface HistoryProofParts {
  anchorHeader: Hex;
  accountProof: Hex[];
  slotProof: Hex[];
}

/** `IStorageProofVerifier.StorageProof`, before encoding. */
export interface StorageProofParts {
  header: Hex;
  accountProof: Hex[];
  slotProofs: Array<{ included: boolean; nodes: Hex[] }>;
  history: HistoryProofParts;
}

export const NO_HISTORY: HistoryProofParts = { anchorHeader: "0x", accountProof: [], slotProof: [] };

/** `abi.encode(StorageProof)`: the verifier's `proof` argument. */
export function encodeStorageProof(parts: StorageProofParts): Hex {
  return encodeAbiParameters(STORAGE_PROOF_PARAMETERS, [parts]);
}

/**
 * The history proof of block `blockNumber` (whose hash is `blockHash`) at the anchor block `anchorBlockNumber`,
 * one of the 8,191 blocks after it: the anchor's header and the EIP-2935 contract's account and slot proofs.
 */
export async function buildHistoryProof(
  rpc: ProofRpc,
  query: { blockNumber: bigint; blockHash: Hex; anchorBlockNumber: bigint },
): Promise<{ history: HistoryProofParts; anchor: { blockNumber: bigint; blockHash: Hex } }> {
  const lag = query.anchorBlockNumber - query.blockNumber;
  if (lag <= 0n || lag > HISTORY_SERVE_WINDOW) {
    throw new BalanceProofError(
      `block ${query.blockNumber} is not among the ${HISTORY_SERVE_WINDOW} blocks before the anchor ${query.anchorBlockNumber}`,
    );
  }
  const historySlot = slotWord(query.blockNumber % HISTORY_SERVE_WINDOW);
  const anchored = await readProof(rpc, HISTORY_CONTRACT, [historySlot], query.anchorBlockNumber);
  const [recorded] = anchored.proof.storageProof;
  if (BigInt(recorded.value) !== BigInt(query.blockHash)) {
    throw new BalanceProofError(`the history contract at block ${query.anchorBlockNumber} does not hold block ${query.blockNumber}'s hash`);
  }
  return {
    history: { anchorHeader: anchored.header, accountProof: anchored.proof.accountProof, slotProof: recorded.proof },
    anchor: { blockNumber: query.anchorBlockNumber, blockHash: anchored.block.hash },
  };
}

/**
 * eth_getProof of `account`'s `slots` at `blockNumber`, with the block's header, ABI-encoded as
 * `StorageProofVerifier.verifyStorage` takes it. A slot the trie holds gets an inclusion proof, one it does not (a
 * value of 0) an exclusion proof. With `anchorBlockNumber` (one of the 8,191 blocks after `blockNumber`, one the
 * L2 knows), the proof adds the history proof (`buildHistoryProof`).
 */
export async function buildStorageProof(
  rpc: ProofRpc,
  query: { account: string; slots: readonly Hex[]; blockNumber: bigint; anchorBlockNumber?: bigint },
): Promise<StorageProofBundle & { parts: StorageProofParts }> {
  const { block, header, proof } = await readProof(rpc, query.account, query.slots, query.blockNumber);
  const values = proof.storageProof.map(({ value }) => BigInt(value));
  // The trie holds no zero: a slot whose value is 0 is absent, and its proof shows that.
  const slotProofs = proof.storageProof.map(({ proof: nodes }, i) => ({ included: values[i] !== 0n, nodes }));
  const anchored =
    query.anchorBlockNumber === undefined || query.anchorBlockNumber === query.blockNumber
      ? undefined
      : await buildHistoryProof(rpc, { blockNumber: query.blockNumber, blockHash: block.hash, anchorBlockNumber: query.anchorBlockNumber });
  const parts = { header, accountProof: proof.accountProof, slotProofs, history: anchored?.history ?? NO_HISTORY };
  return {
    blockNumber: query.blockNumber,
    blockHash: block.hash,
    anchor: anchored?.anchor,
    values,
    parts,
    encoded: encodeStorageProof(parts),
  };
}

/** `buildStorageProof` of the owner's balance slot, as `verifyBalance` takes it; `value` is the balance. */
export async function buildBalanceProof(
  rpc: ProofRpc,
  query: { token: string; owner: string; balancesSlot: bigint; blockNumber: bigint; anchorBlockNumber?: bigint },
): Promise<BalanceProof> {
  const storageKey = balanceSlotKey(query.owner, query.balancesSlot);
  const {
    values,
    parts: _parts,
    ...bundle
  } = await buildStorageProof(rpc, {
    account: query.token,
    slots: [storageKey],
    blockNumber: query.blockNumber,
    anchorBlockNumber: query.anchorBlockNumber,
  });
  return { ...bundle, balancesSlot: query.balancesSlot, storageKey, value: values[0] };
}
