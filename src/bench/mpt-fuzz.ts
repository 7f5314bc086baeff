// Differential fuzzing of the calldata trie walk (`CalldataMpt`, through `CalldataMptHarness.walk`) against the
// reference, Optimism Bedrock's `MerkleTrie` (through `BedrockStorageProofVerifier.trieGet`), with
// `@ethereumjs/mpt` building the tries and telling what is true. `npm run fuzz:mpt` runs it at length; the test
// suite runs a short form (test/ts/proofs/MptDifferential.ts).
//
// The rule: the two agree on every input, the same value or both refuse. Bedrock proves inclusion only, so on a
// proof of absence it refuses while the walk says "absent"; there the walk must agree with @ethereumjs/mpt's
// verifier (null: proven absent), and Bedrock must refuse.
import { readFileSync } from "node:fs";
import path from "node:path";

import { createMerkleProof, createMPT, verifyMerkleProof, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import { bytesToHex, fromRlp, hexToBytes, keccak256, toRlp, type Hex } from "viem";

import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";

/** What the two contracts answer: a value, "absent" (the walk only), or a refusal. */
type Answer = { value: Hex } | "absent" | "refused";

/** One input: a root, a 32-byte path and proof nodes. */
export interface TrieCase {
  root: Hex;
  path: Hex;
  proof: Hex[];
}

/** The two contracts, as calls that resolve to their answers for many cases at once. */
export interface TrieWalkers {
  ours(cases: TrieCase[]): Promise<Answer[]>;
  bedrock(cases: TrieCase[]): Promise<Answer[]>;
}

/** A fuzzing case's kind. */
export type CaseKind = "inclusion" | "exclusion" | "corrupted byte" | "reshaped proof" | "mainnet corruption";

export interface FuzzReport {
  cases: number;
  disagreements: number;
  /**
   * Changed proofs that the walk verifies to the value @ethereumjs/mpt reads from them too, and Bedrock refuses
   * because an inline node is not listed again as a node of its own: geth's eth_getProof never lists it, Bedrock
   * requires it (MerkleTrie: "invalid internal node hash"), the walk takes both forms. Counted apart, not agreed.
   */
  bedrockInlineRefusals: number;
  byKind: Record<CaseKind, number>;
  /** Tries built, and how many of their proofs crossed an inline (under 32 bytes) node or an extension. */
  tries: number;
  inlineProofs: number;
  extensionProofs: number;
  /** The first few disagreements, for the report. */
  examples: string[];
}

/** A real proof: its root, path and nodes, and the value it proves. */
export interface FixtureProof {
  root: Hex;
  path: Hex;
  nodes: Hex[];
  value: Hex;
}

/** A small deterministic generator (mulberry32), so that a seed names a run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A case: the walkers' answers must meet the rule of its kind. */
function agrees(kind: CaseKind, ours: Answer, bedrock: Answer, truth: Answer): boolean {
  const same = (a: Answer, b: Answer) =>
    typeof a === "string" || typeof b === "string" ? a === b : a.value.toLowerCase() === b.value.toLowerCase();
  if (kind === "inclusion") return same(ours, truth) && same(bedrock, truth);
  if (kind === "exclusion") return ours === "absent" && truth === "absent" && bedrock === "refused";
  // A changed proof: both refuse, or both give the same value (a change that does not matter).
  return same(ours, bedrock);
}

/**
 * Runs `cases` random cases (and, first, every single-byte corruption of `fixtures`, real mainnet proofs) through
 * both walkers, `parallel` at a time. Random tries have 1 to 3,000 keys; a third of them are built from paths
 * that share long prefixes, which makes extension nodes and inline nodes (leaves under 32 bytes).
 */
export async function fuzzTrieWalk(
  walkers: TrieWalkers,
  options: { cases: number; seed: number; fixtures?: FixtureProof[]; parallel?: number; onProgress?: (report: FuzzReport) => void },
): Promise<FuzzReport> {
  const next = random(options.seed);
  const report: FuzzReport = {
    cases: 0,
    disagreements: 0,
    bedrockInlineRefusals: 0,
    byKind: { inclusion: 0, exclusion: 0, "corrupted byte": 0, "reshaped proof": 0, "mainnet corruption": 0 },
    tries: 0,
    inlineProofs: 0,
    extensionProofs: 0,
    examples: [],
  };
  const pending: Array<TrieCase & { kind: CaseKind; truth: Answer }> = [];
  const check = (kind: CaseKind, root: Hex, path: Hex, proof: Hex[], truth: Answer) => pending.push({ kind, root, path, proof, truth });
  // Many cases per call, a few calls at a time: a call per case is what limits the pace.
  const batch = 32;
  const run = async (cases: typeof pending) => {
    const [ours, bedrock] = await Promise.all([walkers.ours(cases), walkers.bedrock(cases)]);
    for (const [i, { kind, truth, ...input }] of cases.entries()) {
      report.cases += 1;
      report.byKind[kind] += 1;
      if (agrees(kind, ours[i], bedrock[i], truth)) continue;
      if (bedrock[i] === "refused" && (await isGethFormOfTruth(input, ours[i]))) {
        report.bedrockInlineRefusals += 1;
        continue;
      }
      report.disagreements += 1;
      if (report.examples.length < 5) report.examples.push(JSON.stringify({ kind, ...input, ours: ours[i], bedrock: bedrock[i], truth }));
    }
  };
  const drain = async () => {
    const parallel = options.parallel ?? 4;
    while (pending.length > 0) {
      const chunks = Array.from({ length: parallel }, () => pending.splice(0, batch)).filter((chunk) => chunk.length > 0);
      await Promise.all(chunks.map(run));
    }
    options.onProgress?.(report);
  };

  // Every byte of every node of each real proof, changed once (XOR with a nonzero byte that varies by position).
  for (const fixture of options.fixtures ?? []) {
    for (const [index, node] of fixture.nodes.entries()) {
      const bytes = hexToBytes(node);
      for (let position = 0; position < bytes.length; position++) {
        const changed = Uint8Array.from(bytes);
        changed[position] ^= ((position * 37 + index) % 255) + 1;
        const proof = fixture.nodes.with(index, bytesToHex(changed));
        check("mainnet corruption", fixture.root, fixture.path, proof, { value: fixture.value });
        if (pending.length >= 512) await drain();
      }
    }
  }
  await drain();

  while (report.cases + pending.length < options.cases) {
    const { trie, paths } = await randomTrie(next);
    report.tries += 1;
    const root = bytesToHex(trie.root());
    for (let round = 0; round < 40 && report.cases + pending.length < options.cases; round++) {
      const roll = next();
      if (roll < 0.3) {
        const absent = randomPath(next, paths);
        const proof = (await createMerkleProof(trie, hexToBytes(absent))).map((node) => bytesToHex(node));
        const truth = await verifyMerkleProof(
          hexToBytes(absent),
          proof.map((node) => hexToBytes(node)),
          { root: trie.root() },
        );
        check("exclusion", root, absent, proof, truth === null ? "absent" : { value: bytesToHex(truth) });
        continue;
      }
      const path = paths[Math.floor(next() * paths.length)];
      const proof = (await createMerkleProof(trie, hexToBytes(path))).map((node) => bytesToHex(node));
      const value = bytesToHex((await trie.get(hexToBytes(path)))!);
      countShapes(report, proof);
      if (roll < 0.6) check("inclusion", root, path, proof, { value });
      else if (roll < 0.85) check("corrupted byte", root, path, corruptByte(next, proof), { value });
      else check("reshaped proof", root, path, reshape(next, proof), { value });
    }
    if (pending.length >= 512) await drain();
  }
  await drain();
  return report;
}

/**
 * Whether `answer` is what @ethereumjs/mpt reads from the same (changed) proof, and the proof is one that leaves an
 * inline node unlisted (geth's form): the one input on which the walk is meant to differ from Bedrock.
 */
async function isGethFormOfTruth(input: TrieCase, answer: Answer): Promise<boolean> {
  if (typeof answer === "string") return false;
  const inline = input.proof.flatMap((node) => inlineChildren(node)).map((child) => child.toLowerCase());
  const listed = new Set(input.proof.map((node) => node.toLowerCase()));
  if (inline.length === 0 || inline.every((child) => listed.has(child))) return false;
  try {
    const nodes = input.proof.map((node) => hexToBytes(node));
    const value = await verifyMerkleProof(hexToBytes(input.path), nodes, { root: hexToBytes(input.root) });
    return value !== null && bytesToHex(value).toLowerCase() === answer.value.toLowerCase();
  } catch {
    return false;
  }
}

/** A random trie of 1 to 3,000 keys with values of 1 to 40 bytes; a third of them with paths that share long prefixes. */
async function randomTrie(next: () => number): Promise<{ trie: MerklePatriciaTrie; paths: Hex[] }> {
  const trie = await createMPT();
  const size = 1 + Math.floor(next() ** 3 * 3000);
  const clustered = next() < 1 / 3;
  const base = randomBytes(next, 32);
  const paths: Hex[] = [];
  for (let i = 0; i < size; i++) {
    const path = randomBytes(next, 32);
    if (clustered) {
      // Share the first 20 to 31 bytes with the base: deep branches, extensions and short leaves.
      path.set(base.subarray(0, 20 + Math.floor(next() * 12)));
    }
    const value = randomBytes(next, 1 + Math.floor(next() * 40));
    await trie.put(path, value);
    paths.push(bytesToHex(path));
  }
  return { trie, paths: [...new Set(paths)] };
}

/** A path that is not in `paths`: fresh, or one of them with one nibble changed (a near miss). */
function randomPath(next: () => number, paths: Hex[]): Hex {
  const known = new Set(paths);
  for (;;) {
    let candidate: Uint8Array;
    if (next() < 0.5) candidate = randomBytes(next, 32);
    else {
      candidate = hexToBytes(paths[Math.floor(next() * paths.length)]);
      const at = Math.floor(next() * 32);
      candidate[at] ^= next() < 0.5 ? 0x0f & (1 + Math.floor(next() * 15)) : 0xf0 & ((1 + Math.floor(next() * 15)) << 4);
    }
    const hex = bytesToHex(candidate);
    if (!known.has(hex)) return hex;
  }
}

/** The proof with one byte of one node changed. */
function corruptByte(next: () => number, proof: Hex[]): Hex[] {
  const index = Math.floor(next() * proof.length);
  const bytes = hexToBytes(proof[index]);
  bytes[Math.floor(next() * bytes.length)] ^= 1 + Math.floor(next() * 255);
  return proof.with(index, bytesToHex(bytes));
}

/** The proof with a node dropped, repeated, swapped or added, or cut short. */
function reshape(next: () => number, proof: Hex[]): Hex[] {
  const index = Math.floor(next() * proof.length);
  switch (Math.floor(next() * 5)) {
    case 0:
      return proof.toSpliced(index, 1);
    case 1:
      return proof.toSpliced(index, 0, proof[index]);
    case 2:
      return proof.length < 2
        ? [...proof, proof[0]]
        : proof.with(index, proof[(index + 1) % proof.length]).with((index + 1) % proof.length, proof[index]);
    case 3:
      return [...proof, bytesToHex(randomBytes(next, 1 + Math.floor(next() * 60)))];
    default:
      return proof.slice(0, index);
  }
}

/** Counts a proof that crosses an extension or carries an inline node (a child list under 32 bytes). */
function countShapes(report: FuzzReport, proof: Hex[]): void {
  // An extension is a two-item node whose compact path starts with flag 0 or 1.
  const isExtension = (items: readonly Item[]) =>
    items.length === 2 && typeof items[0] === "string" && parseInt(items[0][2] ?? "f", 16) < 2;
  if (proof.some((node) => isExtension(itemsOf(node)))) report.extensionProofs += 1;
  if (proof.some((node) => inlineChildren(node).length > 0)) report.inlineProofs += 1;
}

/** An RLP item as viem decodes it: bytes, or a list of items. */
type Item = Hex | readonly Item[];

/** The items of an RLP list node (viem's decoding), or none for bytes that are not one. */
function itemsOf(node: Hex): readonly Item[] {
  try {
    const decoded: Item = fromRlp(node, "hex");
    return typeof decoded === "string" ? [] : decoded;
  } catch {
    return [];
  }
}

/** The node's items that are lists, its inline child nodes, as their RLP bytes. */
function inlineChildren(node: Hex): Hex[] {
  return itemsOf(node)
    .filter((item) => typeof item !== "string")
    .map((item) => toRlp(item));
}

function randomBytes(next: () => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => Math.floor(next() * 256));
}

/** The contracts that walk tries, deployed on `ethers`'s network, as `TrieWalkers`. */
export async function deployTrieWalkers(ethers: HardhatEthers): Promise<TrieWalkers> {
  const harness = await ethers.deployContract("CalldataMptHarness");
  // The reference verifier's constructor wants an L1BlockHashes of an L1Block; trieGet uses neither.
  const hashes = await ethers.deployContract("L1BlockHashes", [L2_PREDEPLOYS.L1Block]);
  const bedrock = await ethers.deployContract("BedrockStorageProofVerifier", [await hashes.getAddress(), L2_PREDEPLOYS.L1Block]);
  const columns = (cases: TrieCase[]) => ({
    roots: cases.map(({ root }) => root),
    paths: cases.map(({ path }) => path),
    proofs: cases.map(({ proof }) => proof),
  });
  return {
    async ours(cases) {
      const { roots, paths, proofs } = columns(cases);
      const [outcomes, values] = (await harness.getFunction("walkMany").staticCall(roots, paths, proofs)) as [bigint[], Hex[]];
      return outcomes.map((outcome, i) => (outcome === 0n ? { value: values[i] } : outcome === 1n ? "absent" : "refused"));
    },
    async bedrock(cases) {
      const { roots, paths, proofs } = columns(cases);
      const [found, values] = (await bedrock.getFunction("trieGetMany").staticCall(paths, proofs, roots)) as [boolean[], Hex[]];
      return found.map((ok, i) => (ok ? { value: values[i] } : "refused"));
    },
  };
}

/** The real mainnet proofs of test/fixtures/mainnet-proofs.json, each account and storage proof on its own. */
export async function mainnetProofs(): Promise<FixtureProof[]> {
  const file = path.resolve(import.meta.dirname, "../../test/fixtures/mainnet-proofs.json");
  const { cases } = JSON.parse(readFileSync(file, "utf8")) as {
    cases: Array<{ account: Hex; storageKey: Hex; stateRoot: Hex; storageRoot: Hex; accountProof: Hex[]; storageProof: Hex[] }>;
  };
  const proofs: FixtureProof[] = [];
  for (const fixture of cases) {
    for (const [key, root, nodes] of [
      [fixture.account, fixture.stateRoot, fixture.accountProof],
      [fixture.storageKey, fixture.storageRoot, fixture.storageProof],
    ] as const) {
      // The value as @ethereumjs/mpt reads it from the proof: the truth both walkers must give back.
      const value = await verifyMerkleProof(
        hexToBytes(key),
        nodes.map((node) => hexToBytes(node)),
        { root: hexToBytes(root), useKeyHashing: true },
      );
      if (value === null) throw new Error(`a fixture proof of ${key} proves absence`);
      proofs.push({ root, path: keccak256(key), nodes: [...nodes], value: bytesToHex(value) });
    }
  }
  return proofs;
}
