import { createHash } from "node:crypto";

import { ed25519 } from "@noble/curves/ed25519";
import {
  createSignableMessage,
  generateKeyPairSigner,
  getAddressDecoder,
  getBase58Decoder,
  getPublicKeyFromAddress,
  signatureBytes,
  verifySignature,
  type Address,
} from "@solana/kit";
import { expect } from "chai";
import fc from "fast-check";
import { getAddress, keccak256, toBytes } from "viem";

import {
  canonicalCondition,
  conditionHash,
  conditionLeaves,
  ConditionInputError,
  evaluateCondition,
  leafHolds,
  leafPaths,
  linkMessage,
  MAX_CONDITION_DEPTH,
  MAX_CONDITION_LEAVES,
  normalizeCondition,
  ownersHash,
  parseConditionRequest,
  verifySolanaLink,
  type ConditionLeaf,
  type ConditionNode,
} from "@avn/protocol/conditions";

// Pure logic of the condition format (packages/protocol/src/conditions.ts): evaluation against a model,
// the normal form and its hash, the caps. The routes, the reads and the signatures have their own suites.

const EVM = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const MINT = "So11111111111111111111111111111111111111112";

/** A condition tree whose leaves carry the answer the model uses (`holds`), at most `depth` combinators deep. */
type ModelNode =
  | { kind: "leaf"; holds: boolean }
  | { kind: "all" | "any"; children: ModelNode[] }
  | { kind: "atLeast"; n: number; children: ModelNode[] }
  | { kind: "not"; child: ModelNode };

const modelTree: fc.Arbitrary<ModelNode> = fc.letrec<{ node: ModelNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ kind: fc.constant("leaf" as const), holds: fc.boolean() }),
    fc.record({ kind: fc.constantFrom("all" as const, "any" as const), children: fc.array(tie("node"), { minLength: 1, maxLength: 3 }) }),
    fc.array(tie("node"), { minLength: 1, maxLength: 3 }).chain((children) =>
      fc.record({
        kind: fc.constant("atLeast" as const),
        n: fc.integer({ min: 1, max: children.length }),
        children: fc.constant(children),
      }),
    ),
    fc.record({ kind: fc.constant("not" as const), child: tie("node") }),
  ),
})).node;

/** The model: a direct reading of each combinator's meaning. */
function modelVerdict(node: ModelNode): boolean {
  switch (node.kind) {
    case "leaf":
      return node.holds;
    case "all":
      return node.children.every(modelVerdict);
    case "any":
      return node.children.some(modelVerdict);
    case "atLeast":
      return node.children.filter(modelVerdict).length >= node.n;
    case "not":
      return !modelVerdict(node.child);
  }
}

/** The same tree in the wire format (every leaf the same Ethereum asset), and its leaves' answers in order. */
function toCondition(node: ModelNode): { condition: ConditionNode; holds: boolean[] } {
  const holds: boolean[] = [];
  const visit = (current: ModelNode): ConditionNode => {
    switch (current.kind) {
      case "leaf":
        holds.push(current.holds);
        return { chain: "ethereum", contract_address: EVM, min: "1" };
      case "all":
        return { all: current.children.map(visit) };
      case "any":
        return { any: current.children.map(visit) };
      case "atLeast":
        return { atLeast: current.n, of: current.children.map(visit) };
      case "not":
        return { not: visit(current.child) };
    }
  };
  return { condition: visit(node), holds };
}

/** Depth as the format counts it: combinators above a leaf. */
function depthOf(node: ModelNode): number {
  if (node.kind === "leaf") return 0;
  if (node.kind === "not") return 1 + depthOf(node.child);
  return 1 + Math.max(...node.children.map(depthOf));
}

function countLeaves(node: ModelNode): number {
  if (node.kind === "leaf") return 1;
  if (node.kind === "not") return countLeaves(node.child);
  return node.children.reduce((sum, child) => sum + countLeaves(child), 0);
}

/** The same JSON with every object's keys in another order (JSON objects are unordered). */
function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((item, index) => shuffleKeys(item, seed + index));
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value);
  const rotated = entries.map((_, index) => entries[(index + seed) % entries.length]);
  return Object.fromEntries(rotated.reverse().map(([key, child]) => [key, shuffleKeys(child, seed + 1)]));
}

describe("Conditions: the format, its normal form and its evaluation (fast-check)", function () {
  it("evaluates all / any / atLeast / not as the model does", function () {
    fc.assert(
      fc.property(modelTree, (tree) => {
        fc.pre(depthOf(tree) <= MAX_CONDITION_DEPTH && countLeaves(tree) <= MAX_CONDITION_LEAVES);
        const { condition, holds } = toCondition(tree);
        const normal = normalizeCondition(condition);
        expect(conditionLeaves(normal)).to.have.length(holds.length);
        expect(evaluateCondition(normal, holds)).to.equal(modelVerdict(tree));
      }),
      { numRuns: 500 },
    );
  });

  it("keeps De Morgan's laws and atLeast's bounds", function () {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), (holds) => {
        const leaves: ConditionNode[] = holds.map(() => ({ chain: "ethereum", contract_address: EVM, min: "1" }));
        const notAll = evaluateCondition({ not: { all: leaves } }, holds);
        const anyNot = evaluateCondition({ any: leaves.map((leaf) => ({ not: leaf })) }, holds);
        expect(notAll).to.equal(anyNot);
        expect(evaluateCondition({ atLeast: 1, of: leaves }, holds)).to.equal(evaluateCondition({ any: leaves }, holds));
        expect(evaluateCondition({ atLeast: leaves.length, of: leaves }, holds)).to.equal(evaluateCondition({ all: leaves }, holds));
      }),
    );
  });

  it("refuses a leaf-result list of the wrong length", function () {
    const leaf: ConditionNode = { chain: "ethereum", contract_address: EVM, min: "1" };
    expect(() => evaluateCondition({ all: [leaf, leaf] }, [true])).to.throw(RangeError);
    expect(() => evaluateCondition({ all: [leaf] }, [true, true])).to.throw(RangeError);
  });

  it("holds a leaf for min ≤ balance ≤ max, both inclusive, in raw units above 2^53", function () {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
        fc.bigInt({ min: 0n, max: 2n ** 80n }),
        fc.option(fc.bigInt({ min: 0n, max: 2n ** 80n })),
        (balance, min, span) => {
          const leaf: ConditionLeaf = {
            chain: "solana",
            token_mint_address: MINT,
            min: String(min),
            ...(span === null ? {} : { max: String(min + span) }),
          };
          const expected = balance >= min && (span === null || balance <= min + span);
          expect(leafHolds(leaf, balance)).to.equal(expected);
        },
      ),
    );
    const exact: ConditionLeaf = { chain: "ethereum", contract_address: EVM, min: "9007199254740993", max: "9007199254740993" };
    expect(leafHolds(exact, 9_007_199_254_740_993n)).to.equal(true);
    expect(leafHolds(exact, 9_007_199_254_740_992n)).to.equal(false);
    expect(leafHolds(exact, 9_007_199_254_740_994n)).to.equal(false);
  });

  it("hashes the same condition the same whatever the key order, address case, leading zeros and defaults", function () {
    const spellings = fc.record({
      seed: fc.nat(10),
      upper: fc.boolean(),
      checksummed: fc.boolean(),
      zeros: fc.nat(3),
      minWritten: fc.boolean(),
    });
    fc.assert(
      fc.property(modelTree, spellings, (tree, spelling) => {
        fc.pre(depthOf(tree) <= MAX_CONDITION_DEPTH && countLeaves(tree) <= MAX_CONDITION_LEAVES);
        const { condition } = toCondition(tree);
        const address = spelling.checksummed ? getAddress(EVM) : spelling.upper ? `0x${EVM.slice(2).toUpperCase()}` : EVM;
        const respell = (node: unknown): unknown => {
          if (Array.isArray(node)) return node.map(respell);
          if (typeof node !== "object" || node === null) return node;
          const record = node as Record<string, unknown>;
          if (record.chain !== "ethereum") return Object.fromEntries(Object.entries(record).map(([key, child]) => [key, respell(child)]));
          const { min: _min, ...rest } = record;
          return { ...rest, contract_address: address, ...(spelling.minWritten ? { min: `${"0".repeat(spelling.zeros)}1` } : {}) };
        };
        const other = shuffleKeys(respell(condition), spelling.seed);
        expect(conditionHash(other)).to.equal(conditionHash(condition));
        expect(canonicalCondition(normalizeCondition(other))).to.equal(canonicalCondition(normalizeCondition(condition)));
      }),
      { numRuns: 300 },
    );
  });

  it("hashes the RFC 8785 canonical JSON of the normal form", function () {
    const condition = {
      any: [
        { min: "0010", chain: "ethereum", token_id: "007", contract_address: getAddress(EVM) },
        { chain: "solana", token_mint_address: MINT },
      ],
    };
    // Keys sorted by their UTF-16 code units, no whitespace, defaults written, numbers normalised.
    const canonical =
      `{"any":[{"chain":"ethereum","contract_address":"${EVM}","min":"10","token_id":"7"},` +
      `{"chain":"solana","min":"1","token_mint_address":"${MINT}"}]}`;
    expect(canonicalCondition(normalizeCondition(condition))).to.equal(canonical);
    expect(conditionHash(condition)).to.equal(keccak256(toBytes(canonical)));
  });

  it("tells conditions apart that differ in meaning", function () {
    const leaf = { chain: "ethereum", contract_address: EVM };
    const hashes = [
      { all: [leaf] },
      { any: [leaf] },
      { atLeast: 1, of: [leaf] },
      { not: leaf },
      leaf,
      { ...leaf, min: "2" },
      { ...leaf, max: "1" },
      { ...leaf, token_id: "0" },
      { chain: "solana", token_mint_address: MINT },
    ].map(conditionHash);
    expect(new Set(hashes).size).to.equal(hashes.length);
  });

  it("caps a condition at 16 leaves and 4 combinators above a leaf, naming where", function () {
    const leaf = { chain: "ethereum", contract_address: EVM };
    expect(() => normalizeCondition({ any: Array(MAX_CONDITION_LEAVES).fill(leaf) })).not.to.throw();
    expect(() => normalizeCondition({ any: Array(MAX_CONDITION_LEAVES + 1).fill(leaf) })).to.throw(
      ConditionInputError,
      /^condition\.any has 17 entries/,
    );
    // Spread over two lists, still one condition of 17 leaves.
    expect(() => normalizeCondition({ all: [{ any: Array(9).fill(leaf) }, { any: Array(8).fill(leaf) }] })).to.throw(
      ConditionInputError,
      /^condition has 17 leaves/,
    );
    let deep: unknown = leaf;
    for (let depth = 0; depth < MAX_CONDITION_DEPTH; depth++) deep = { not: deep };
    expect(() => normalizeCondition(deep)).not.to.throw();
    expect(() => normalizeCondition({ all: [deep] })).to.throw(
      ConditionInputError,
      /^condition\.all\[0\]\.not\.not\.not is a combinator below 4 others/,
    );
  });

  it("names each leaf's path in order of appearance", function () {
    const leaf = { chain: "ethereum", contract_address: EVM };
    const condition = normalizeCondition({ all: [leaf, { atLeast: 1, of: [{ not: leaf }, leaf] }] });
    expect(leafPaths(condition)).to.deep.equal(["condition.all[0]", "condition.all[1].of[0].not", "condition.all[1].of[1]"]);
  });

  it("answers any JSON with a normal form or a ConditionInputError, never another error", function () {
    const json = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom("ethereum", "solana", EVM, MINT, "1", "-1", "0x10", "", "all", "any", "not", "of", "chain", "min"),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(
          fc.constantFrom(
            "all",
            "any",
            "atLeast",
            "of",
            "not",
            "chain",
            "contract_address",
            "token_mint_address",
            "token_id",
            "min",
            "max",
            "x",
          ),
          tie("value"),
          { maxKeys: 3 },
        ),
      ),
    })).value;
    fc.assert(
      fc.property(json, (condition) => {
        try {
          parseConditionRequest({ owners: { ethereum: EVM, solana: MINT }, condition, links: { solana: "1".repeat(64) } });
        } catch (error) {
          expect(error).to.be.instanceOf(ConditionInputError);
          expect((error as ConditionInputError).message.startsWith((error as ConditionInputError).path)).to.equal(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it("hashes the owners as abi.encode(bytes32, bytes32), an absent one zero", function () {
    const both = ownersHash({ ethereum: getAddress(EVM), solana: MINT });
    expect(both).to.equal(ownersHash({ ethereum: EVM, solana: MINT }));
    expect(ownersHash({ ethereum: EVM })).to.not.equal(both);
    expect(ownersHash({ solana: MINT })).to.not.equal(both);
    // The wrapped SOL mint's 32 bytes: 0x069b8857…0001 (a known key; its base58 is MINT).
    expect(ownersHash({ solana: MINT })).to.equal(
      keccak256(`0x${"0".repeat(64)}069b8857feab8184fb687f634618c035dac439dc1aeb3b5598a0f00000000001`),
    );
  });

  describe("the Solana link", function () {
    const ethereum = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

    it("verifies the owner's signature of the link message, for that chain and that Ethereum owner only", async function () {
      const owner = await generateKeyPairSigner();
      const [signed] = await owner.signMessages([createSignableMessage(linkMessage(ethereum, 901))]);
      const signature = getBase58Decoder().decode(signed[owner.address]);
      expect(await verifySolanaLink({ ethereum, solana: owner.address }, signature, 901)).to.equal(true);
      expect(await verifySolanaLink({ ethereum: ethereum.toLowerCase(), solana: owner.address }, signature, 901n)).to.equal(true);
      expect(await verifySolanaLink({ ethereum, solana: owner.address }, signature, 902)).to.equal(false);
      expect(await verifySolanaLink({ ethereum: EVM, solana: owner.address }, signature, 901)).to.equal(false);
      const other = await generateKeyPairSigner();
      expect(await verifySolanaLink({ ethereum, solana: other.address }, signature, 901)).to.equal(false);
    });

    it("refuses a link to a key of small order, whose signatures anyone can forge, and the all-zero owner", async function () {
      // The all-zero key is a point of order 4: with R = [r]B and S = r, the check [S]B = R + [k]A holds
      // whenever k ≡ 0 (mod 4), one message in four. WebCrypto's Ed25519 accepts such a forgery.
      const zeroKey = new Uint8Array(32);
      const solana = getAddressDecoder().decode(zeroKey) as Address;
      const message = new TextEncoder().encode(linkMessage(ethereum, 901));
      const littleEndian = (bytes: Uint8Array) => bytes.reduceRight((value, byte) => (value << 8n) | BigInt(byte), 0n);
      const toLittleEndian = (value: bigint) => Uint8Array.from({ length: 32 }, (_, index) => Number((value >> BigInt(8 * index)) & 0xffn));
      let forged: Uint8Array | undefined;
      for (let r = 1n; forged === undefined; r++) {
        const R = ed25519.ExtendedPoint.BASE.multiply(r).toRawBytes();
        const k = littleEndian(createHash("sha512").update(R).update(zeroKey).update(message).digest()) % ed25519.CURVE.n;
        if (k % 4n === 0n) forged = new Uint8Array([...R, ...toLittleEndian(r)]);
      }
      expect(await verifySignature(await getPublicKeyFromAddress(solana), signatureBytes(forged), message), "the forgery is real").to.equal(
        true,
      );
      expect(await verifySolanaLink({ ethereum, solana }, getBase58Decoder().decode(forged), 901)).to.equal(false);
      // An absent owner hashes as zero, so a zero owner is refused outright, on either chain.
      const condition = { chain: "solana", token_mint_address: MINT };
      expect(() => parseConditionRequest({ owners: { solana }, condition })).to.throw(
        ConditionInputError,
        /^owners\.solana must not be the all-zero key/,
      );
      expect(() =>
        parseConditionRequest({ owners: { ethereum: `0x${"0".repeat(40)}` }, condition: { chain: "ethereum", contract_address: EVM } }),
      ).to.throw(ConditionInputError, /^owners\.ethereum must not be the zero address/);
    });
  });
});
