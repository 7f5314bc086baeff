/**
 * The Merkle tree of OpenZeppelin's `StandardMerkleTree` (`@openzeppelin/merkle-tree`), whose proofs
 * OpenZeppelin's `MerkleProof` checks on-chain: leaves are `keccak256(keccak256(abi.encode(values)))`, sorted;
 * each inner node hashes its two children in sorted order. Written here over viem because the package brings
 * `@metamask/utils` and its dependencies into every bundle that builds a tree (44 kB gzip in the web app's
 * Network page) for these few lines; `test/ts/common/Merkle.ts` checks roots and proofs against the package
 * itself, which stays a development dependency for that purpose.
 */
import { concat, encodeAbiParameters, hexToBytes, keccak256, type AbiParameter, type Hex } from "viem";

/** A leaf's hash: the double keccak256 of its ABI encoding (a second preimage of an inner node is then no leaf). */
export function standardLeafHash(types: readonly string[], values: readonly unknown[]): Hex {
  const parameters = types.map((type) => ({ type })) as AbiParameter[];
  return keccak256(keccak256(encodeAbiParameters(parameters, values)));
}

/** Byte order of two 32-byte hashes. */
function compareHashes(a: Hex, b: Hex): number {
  const [left, right] = [hexToBytes(a), hexToBytes(b)];
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return left[index] - right[index];
  return 0;
}

const hashPair = (a: Hex, b: Hex): Hex => keccak256(compareHashes(a, b) <= 0 ? concat([a, b]) : concat([b, a]));

/** A tree of `leaves` (their hashes, in any order) and the proof of each. */
export interface MerkleTree {
  root: Hex;
  /** The proof of the leaf given at `index` of the input. */
  proof(index: number): Hex[];
}

/**
 * The tree `StandardMerkleTree.of` builds: the leaves sorted, laid out as a complete binary tree in one array
 * (the last leaf first from the end; node `i`'s children at `2i + 1` and `2i + 2`), the root at 0.
 */
export function standardMerkleTree(leaves: readonly Hex[]): MerkleTree {
  if (leaves.length === 0) throw new RangeError("a Merkle tree needs at least one leaf");
  const order = leaves.map((hash, index) => ({ hash, index })).sort((a, b) => compareHashes(a.hash, b.hash));
  const tree = new Array<Hex>(2 * leaves.length - 1);
  const position = new Map<number, number>();
  order.forEach((leaf, rank) => {
    tree[tree.length - 1 - rank] = leaf.hash;
    position.set(leaf.index, tree.length - 1 - rank);
  });
  for (let node = tree.length - 1 - leaves.length; node >= 0; node--) tree[node] = hashPair(tree[2 * node + 1], tree[2 * node + 2]);
  return {
    root: tree[0],
    proof(index) {
      let node = position.get(index);
      if (node === undefined) throw new RangeError(`no leaf ${index}`);
      const proof: Hex[] = [];
      while (node > 0) {
        proof.push(tree[node % 2 === 1 ? node + 1 : node - 1]);
        node = Math.floor((node - 1) / 2);
      }
      return proof;
    },
  };
}
