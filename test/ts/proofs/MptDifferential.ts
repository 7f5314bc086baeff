import { createMerkleProof, createMPT } from "@ethereumjs/mpt";
import { expect } from "chai";
import { network } from "hardhat";
import { bytesToHex, hexToBytes, keccak256, toRlp, type Hex } from "viem";

import { deployTrieWalkers, fuzzTrieWalk, mainnetProofs, type TrieWalkers } from "../../../src/bench/mpt-fuzz.ts";

/** CalldataMpt.Outcome, in order. */
const OUTCOMES = ["Found", "Absent", "ProofTooShort", "ProofTooLong", "HashMismatch", "MalformedNode"];

/**
 * The calldata trie walk (CalldataMpt) against Bedrock's MerkleTrie, the reference it replaced, with @ethereumjs/mpt
 * telling what is true: the short form of `npm run fuzz:mpt`, and the walk's outcomes one by one.
 */
describe("CalldataMpt: the trie walk, differentially against Bedrock's MerkleTrie", function () {
  this.timeout(300_000);
  let walkers: TrieWalkers;
  let walk: (root: Hex, path: Hex, proof: Hex[]) => Promise<{ outcome: string; node: bigint; value: Hex }>;

  before(async function () {
    const { ethers } = await network.create();
    walkers = await deployTrieWalkers(ethers);
    const harness = await ethers.deployContract("CalldataMptHarness");
    walk = async (root, path, proof) => {
      const [outcome, node, value] = (await harness.getFunction("walk").staticCall(root, path, proof)) as [bigint, bigint, Hex];
      return { outcome: OUTCOMES[Number(outcome)], node, value };
    };
  });

  it("agrees with Bedrock on every single-byte corruption of a real mainnet proof, and on random tries", async function () {
    // The shortest real proof (a 2-node storage proof), every byte of it; then random tries of every shape.
    const fixtures = (await mainnetProofs()).sort((a, b) => a.nodes.join("").length - b.nodes.join("").length).slice(0, 1);
    const report = await fuzzTrieWalk(walkers, { cases: 1_500, seed: 2026, fixtures });
    console.log(
      `      ${report.cases} cases (${Object.entries(report.byKind)
        .map(([kind, count]) => `${kind} ${count}`)
        .join(", ")}); ${report.tries} tries, ${report.extensionProofs} proofs through an extension, ` +
        `${report.inlineProofs} with an inline node; ${report.bedrockInlineRefusals} geth-form proofs only Bedrock refuses`,
    );
    expect(report.examples).to.deep.equal([]);
    expect(report.disagreements).to.equal(0);
    for (const count of Object.values(report.byKind)) expect(count).to.be.greaterThan(0);
    expect(report.extensionProofs).to.be.greaterThan(0);
    expect(report.inlineProofs).to.be.greaterThan(0);
  });

  it("proves absence in an empty trie with no node or with its one empty node, and refuses anything else there", async function () {
    const emptyRoot = keccak256(toRlp("0x"));
    const path = keccak256("0x01");
    expect((await walk(emptyRoot, path, [])).outcome).to.equal("Absent");
    expect((await walk(emptyRoot, path, ["0x80"])).outcome).to.equal("Absent");
    expect((await walk(emptyRoot, path, ["0x80", "0x80"])).outcome).to.equal("MalformedNode");
    expect((await walk(keccak256("0x1234"), path, [])).outcome).to.equal("ProofTooShort");
    // A zero root is no trie's hash: refused, whatever follows.
    for (const proof of [["0xc0"], ["0x"], []] as Hex[][]) {
      const read = await walk(`0x${"00".repeat(32)}`, path, proof);
      expect(read.outcome, proof.join()).to.be.oneOf(["MalformedNode", "ProofTooShort"]);
    }
  });

  it("names the node at fault: a node that does not hash to its reference, a proof cut short or run on", async function () {
    const trie = await createMPT();
    const paths = Array.from({ length: 300 }, (_, i) => keccak256(`0x${i.toString(16).padStart(4, "0")}`));
    for (const [i, path] of paths.entries())
      await trie.put(hexToBytes(path), hexToBytes(keccak256(`0x${i.toString(16).padStart(2, "0")}`)));
    const root = bytesToHex(trie.root());
    const proof = (await createMerkleProof(trie, hexToBytes(paths[7]))).map((node) => bytesToHex(node));
    expect(proof.length).to.be.greaterThan(2);
    const found = await walk(root, paths[7], proof);
    expect([found.outcome, found.node]).to.deep.equal(["Found", BigInt(proof.length - 1)]);
    const swapped = await walk(root, paths[7], proof.with(1, proof[0]));
    expect([swapped.outcome, swapped.node]).to.deep.equal(["HashMismatch", 1n]);
    const short = await walk(root, paths[7], proof.slice(0, -1));
    expect([short.outcome, short.node]).to.deep.equal(["ProofTooShort", BigInt(proof.length - 1)]);
    const long = await walk(root, paths[7], [...proof, proof[0]]);
    expect([long.outcome, long.node]).to.deep.equal(["ProofTooLong", BigInt(proof.length)]);
    expect((await walk(root, paths[7], ["0x", ...proof.slice(1)])).outcome).to.equal("HashMismatch");
  });

  it("reads an inline node whether the proof lists it again (@ethereumjs/mpt) or not (geth)", async function () {
    // Two paths that differ only in their last nibble: their leaves are a few bytes, inlined in their branch.
    const trie = await createMPT();
    const base = keccak256("0xab");
    const near = `${base.slice(0, -1)}${base.at(-1) === "0" ? "1" : "0"}` as Hex;
    await trie.put(hexToBytes(base), hexToBytes("0x01"));
    await trie.put(hexToBytes(near), hexToBytes("0x02"));
    const root = bytesToHex(trie.root());
    const listed = (await createMerkleProof(trie, hexToBytes(base))).map((node) => bytesToHex(node));
    // The extension, the branch, and the inline leaf listed again.
    expect(listed.at(-1)!.length).to.be.lessThan(2 + 64);
    for (const proof of [listed, listed.slice(0, -1)]) {
      const read = await walk(root, base, proof);
      expect([read.outcome, read.value]).to.deep.equal(["Found", "0x01"]);
    }
    // A copy that differs is not a copy: the walk then has a node too many.
    const changed = `${listed.at(-1)!.slice(0, -2)}03` as Hex;
    expect((await walk(root, base, [...listed.slice(0, -1), changed])).outcome).to.equal("ProofTooLong");
  });
});
