import { expect } from "chai";

import { StandardMerkleTree } from "@openzeppelin/merkle-tree";

import { standardLeafHash, standardMerkleTree } from "@avn/protocol/merkle";
import { REWARD_LEAF_ENCODING, rewardsTree } from "@avn/protocol/rewards";

/** A deterministic pseudo-random generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe("the rewards' Merkle tree (@avn/protocol/merkle) against OpenZeppelin's StandardMerkleTree", function () {
  it("gives the package's leaf hashes, root and every proof, for 1 to 40 leaves", function () {
    const next = random(47);
    for (let size = 1; size <= 40; size++) {
      const values = Array.from({ length: size }, (_, index) => [
        BigInt(Math.floor(next() * 1_000)),
        BigInt(index + 1),
        BigInt(Math.floor(next() * 2 ** 52)) * 10n ** 12n,
      ]);
      const reference = StandardMerkleTree.of(values, [...REWARD_LEAF_ENCODING]);
      const ours = standardMerkleTree(values.map((value) => standardLeafHash(REWARD_LEAF_ENCODING, value)));
      expect(ours.root, `root of ${size}`).to.equal(reference.root);
      values.forEach((value, index) => {
        expect(standardLeafHash(REWARD_LEAF_ENCODING, value)).to.equal(reference.leafHash(value));
        expect(ours.proof(index), `proof ${index} of ${size}`).to.deep.equal(reference.getProof(index));
      });
    }
  });

  it("builds the payouts' tree whose proofs the package verifies, and refuses an empty tree or an unknown leaf", function () {
    const tree = rewardsTree(3n, 1_000n, [
      { licenseId: 1n, points: 5, scoreBps: 10_000 },
      { licenseId: 2n, points: 2, scoreBps: 5_000 },
      { licenseId: 7n, points: 1, scoreBps: 9_000 },
    ]);
    for (const payout of tree.payouts) {
      const { amount, proof } = tree.proofOf(payout.licenseId)!;
      expect(StandardMerkleTree.verify(tree.root, [...REWARD_LEAF_ENCODING], [3n, payout.licenseId, amount], proof)).to.equal(true);
    }
    expect(() => standardMerkleTree([])).to.throw(RangeError);
    expect(() => standardMerkleTree([standardLeafHash(["uint256"], [1n])]).proof(1)).to.throw(RangeError);
  });
});
