// Ethereum state and storage proofs (eth_getProof's shape) as deep as mainnet's, built locally and
// deterministically, for the gas benchmarks and tests of an on-chain storage-proof verifier (issue 49).
//
// A trie of a handful of random keys gives proofs of one or two nodes, and even a million random keys only
// about six levels; mainnet's state trie puts an account about eight to ten nodes deep, most of them full
// 16-child branches (532 bytes each), and a busy contract's storage five to seven. A verifier's gas grows with
// both the node count and the node size, so a benchmark needs that shape.
//
// The trick: Ethereum's tries are secure tries (a key's path is keccak256 of the key), yet only our own keys
// are ever proven, so the entries that fill the branches need no preimage. We build plain tries (no key
// hashing) and insert at raw paths: the keccak'd paths of the proven keys, and for each level above the wanted
// depth one sibling under every other nibble, so that each branch node on a proven path has 16 children. A
// proof taken from the plain trie at the hashed path is then byte for byte the secure trie's proof of the raw
// key, which `verifyMerkleProof(rawKey, proof, { root, useKeyHashing: true })` accepts.
import { createMerkleProof, createMPT, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import { bytesToHex, encodePacked, hexToBytes, keccak256, size, toRlp, type Hex } from "viem";

/** The root of an empty trie, keccak256(RLP("")): the storage root of an account that stores nothing. */
export const EMPTY_TRIE_ROOT: Hex = keccak256(toRlp("0x"));
/** keccak256 of empty code: the code hash of an account without code. */
export const EMPTY_CODE_HASH: Hex = keccak256("0x");

/** The fields of an account's state-trie leaf other than its storage root, which the builder computes. */
export interface AccountFields {
  nonce: bigint;
  balance: bigint;
  codeHash: Hex;
}

/** One storage slot to prove: its raw 32-byte key (as given to eth_getProof) and its value, 0n when absent. */
export interface StorageSlot {
  key: Hex;
  value: bigint;
}

export interface DeepStateProofRequest {
  /** The 20-byte address whose account is proven. */
  account: Hex;
  accountFields: AccountFields;
  /** The slots to prove; a 0n value is left out of the trie, so its proof is an exclusion proof. */
  slots: StorageSlot[];
  /** The least number of full 16-child branch nodes on the account's path in the state trie. */
  accountLevels: number;
  /** The least number of full 16-child branch nodes on each slot's path in the storage trie. */
  storageLevels: number;
  /** Chooses the filler entries: the same request always gives the same tries. */
  seed: number;
}

/** What eth_getProof answers for the request's account and slots, with the state root it is checked against. */
export interface DeepStateProof {
  stateRoot: Hex;
  storageRoot: Hex;
  /** The state trie's nodes from the root to the account's leaf. */
  accountProof: Hex[];
  /** One list of storage trie nodes, root first, per requested slot, in the request's order. */
  storageProofs: Hex[][];
}

/** The most full-branch levels a path may ask for: every filler keeps at least 16 random nibbles (see fillBranches). */
const MAX_LEVELS = 48;
const UINT256_LIMIT = 1n << 256n;
const UINT64_LIMIT = 1n << 64n;

/** An integer as RLP carries it: big-endian without leading zero bytes, zero as the empty string. */
export function minimalBytes(value: bigint): Hex {
  if (value < 0n) throw new RangeError(`minimalBytes: negative value ${value}`);
  if (value === 0n) return "0x";
  const digits = value.toString(16);
  return `0x${digits.length % 2 === 0 ? "" : "0"}${digits}`;
}

/** An account leaf's value: RLP([nonce, balance, storageRoot, codeHash]). */
export function encodeAccount(fields: AccountFields, storageRoot: Hex): Hex {
  return toRlp([minimalBytes(fields.nonce), minimalBytes(fields.balance), storageRoot, fields.codeHash]);
}

/** A storage leaf's value as Ethereum stores it: the RLP of the value's minimal big-endian bytes. */
export function encodeStorageValue(value: bigint): Hex {
  return toRlp(minimalBytes(value));
}

export async function buildDeepStateProof(request: DeepStateProofRequest): Promise<DeepStateProof> {
  checkRequest(request);

  const slotPaths = request.slots.map((slot) => pathOf(slot.key));
  const storageEntries = new Map<string, Hex>();
  request.slots.forEach((slot, index) => {
    if (slot.value !== 0n) storageEntries.set(slotPaths[index], encodeStorageValue(slot.value));
  });
  const nextStorageWord = randomWords(request.seed, "storage");
  fillBranches(storageEntries, slotPaths, request.storageLevels, nextStorageWord, () =>
    encodeStorageValue(randomNonzeroValue(nextStorageWord())),
  );
  const storage = await trieOf(storageEntries);
  const storageRoot = bytesToHex(storage.root());

  const accountPath = pathOf(request.account);
  const accountEntries = new Map<string, Hex>([[accountPath, encodeAccount(request.accountFields, storageRoot)]]);
  const nextAccountWord = randomWords(request.seed, "account");
  fillBranches(accountEntries, [accountPath], request.accountLevels, nextAccountWord, () =>
    encodeAccount(randomAccount(nextAccountWord()), EMPTY_TRIE_ROOT),
  );
  const state = await trieOf(accountEntries);

  return {
    stateRoot: bytesToHex(state.root()),
    storageRoot,
    accountProof: await proofOf(state, accountPath),
    storageProofs: await Promise.all(slotPaths.map((path) => proofOf(storage, path))),
  };
}

function checkRequest(request: DeepStateProofRequest): void {
  const problem = (message: string) => new RangeError(`buildDeepStateProof: ${message}`);
  if (size(request.account) !== 20) throw problem(`the account ${request.account} is not 20 bytes`);
  const { nonce, balance, codeHash } = request.accountFields;
  if (nonce < 0n || nonce >= UINT64_LIMIT) throw problem(`the nonce ${nonce} is not a uint64`);
  if (balance < 0n || balance >= UINT256_LIMIT) throw problem(`the balance ${balance} is not a uint256`);
  if (size(codeHash) !== 32) throw problem(`the code hash ${codeHash} is not 32 bytes`);
  for (const levels of [request.accountLevels, request.storageLevels]) {
    if (!Number.isInteger(levels) || levels < 0 || levels > MAX_LEVELS)
      throw problem(`${levels} levels is not an integer from 0 to ${MAX_LEVELS}`);
  }
  if (!Number.isSafeInteger(request.seed) || request.seed < 0) throw problem(`the seed ${request.seed} is not a non-negative integer`);
  const keys = new Set<string>();
  for (const slot of request.slots) {
    if (size(slot.key) !== 32) throw problem(`the storage key ${slot.key} is not 32 bytes`);
    if (slot.value < 0n || slot.value >= UINT256_LIMIT) throw problem(`the value ${slot.value} is not a uint256`);
    // Two requests for one key would give one entry and two answers; the caller meant something else.
    if (keys.has(slot.key.toLowerCase())) throw problem(`the storage key ${slot.key} is asked twice`);
    keys.add(slot.key.toLowerCase());
  }
}

/** A key's path in a secure trie, as 64 lower-case hex nibbles. */
function pathOf(key: Hex): string {
  return keccak256(key).slice(2);
}

/**
 * Inserts filler entries so that, for every proven path (present or absent), the branch nodes at depths 0 to
 * `levels - 1` each have all 16 children. A child is there when some entry's path starts with its prefix; an
 * empty one gets one filler leaf whose path is that prefix followed by random nibbles. Under an absent path's
 * own prefix the filler is the neighbour leaf its exclusion proof ends at.
 */
function fillBranches(entries: Map<string, Hex>, provenPaths: string[], levels: number, nextWord: () => Hex, fillerValue: () => Hex): void {
  const occupied = new Set<string>();
  const occupy = (path: string) => {
    for (let length = 1; length <= levels; length++) occupied.add(path.slice(0, length));
  };
  [...entries.keys()].forEach(occupy);
  const proven = new Set(provenPaths);

  for (const path of provenPaths) {
    for (let depth = 0; depth < levels; depth++) {
      for (let nibble = 0; nibble < 16; nibble++) {
        const prefix = path.slice(0, depth) + nibble.toString(16);
        if (occupied.has(prefix)) continue;
        const filler = prefix + nextWord().slice(2 + prefix.length);
        // A filler on an absent proven path would turn its exclusion proof into an inclusion. With at least 16
        // random nibbles that is a 2^-64 chance, so meeting it means a mistake here: refuse rather than go on.
        if (proven.has(filler) || entries.has(filler)) throw new Error(`fillBranches: filler ${filler} collides with a path`);
        entries.set(filler, fillerValue());
        occupy(filler);
      }
    }
  }
}

/** An endless stream of 32-byte words drawn from the seed, one stream per trie. */
function randomWords(seed: number, label: string): () => Hex {
  let counter = 0n;
  return () => keccak256(encodePacked(["string", "uint256", "uint256"], [label, BigInt(seed), counter++]));
}

/** A plausible other account: a small nonce and balance, no storage, no code. */
function randomAccount(word: Hex): AccountFields {
  return {
    nonce: BigInt(`0x${word.slice(2, 5)}`), // below 4,096
    balance: BigInt(`0x${word.slice(5, 21)}`), // below 2^64 wei, about 18 ether
    codeHash: EMPTY_CODE_HASH,
  };
}

/** A nonzero storage value of 1 to 32 bytes (a flag, a balance, an address, a packed word). */
function randomNonzeroValue(word: Hex): bigint {
  const byteLength = 1 + (parseInt(word.slice(2, 4), 16) % 32);
  const value = BigInt(`0x${word.slice(66 - 2 * byteLength)}`);
  return value === 0n ? 1n : value;
}

async function trieOf(entries: Map<string, Hex>): Promise<MerklePatriciaTrie> {
  // No key hashing: the paths are hashed already, and the fillers have no preimage to hash.
  const trie = await createMPT({ useKeyHashing: false });
  for (const [path, value] of entries) await trie.put(hexToBytes(`0x${path}`), hexToBytes(value));
  return trie;
}

async function proofOf(trie: MerklePatriciaTrie, path: string): Promise<Hex[]> {
  const nodes = await createMerkleProof(trie, hexToBytes(`0x${path}`));
  return nodes.map((node) => bytesToHex(node));
}
