import { readFileSync } from "node:fs";
import path from "node:path";

import { verifyMerkleProof } from "@ethereumjs/mpt";
import { expect } from "chai";
import { bytesToHex, encodeAbiParameters, fromRlp, hexToBytes, keccak256, numberToHex, pad, type Hex } from "viem";

import {
  buildDeepStateProof,
  EMPTY_CODE_HASH,
  EMPTY_TRIE_ROOT,
  encodeAccount,
  type DeepStateProofRequest,
} from "../../../src/bench/deep-trie.ts";

interface MainnetCase {
  block: number;
  account: Hex;
  storageKey: Hex;
  stateRoot: Hex;
  storageRoot: Hex;
  value: Hex;
  accountProof: Hex[];
  storageProof: Hex[];
}

interface DeepCase {
  name: string;
  inputs: {
    account: Hex;
    accountFields: { nonce: string; balance: string; codeHash: Hex };
    slots: Array<{ owner: Hex; key: Hex; value: Hex }>;
    accountLevels: number;
    storageLevels: number;
    seed: number;
  };
  outputs: { stateRoot: Hex; storageRoot: Hex; accountProof: Hex[]; storageProofs: Hex[][] };
}

const fixturesDir = path.resolve(import.meta.dirname, "..", "..", "fixtures");
const readFixture = (name: string) => JSON.parse(readFileSync(path.join(fixturesDir, name), "utf8"));
const mainnetCases: MainnetCase[] = readFixture("mainnet-proofs.json").cases;
const deepCases: DeepCase[] = readFixture("deep-proofs.json").cases;

function requestOf(inputs: DeepCase["inputs"]): DeepStateProofRequest {
  return {
    account: inputs.account,
    accountFields: {
      nonce: BigInt(inputs.accountFields.nonce),
      balance: BigInt(inputs.accountFields.balance),
      codeHash: inputs.accountFields.codeHash,
    },
    slots: inputs.slots.map((slot) => ({ key: slot.key, value: BigInt(slot.value) })),
    accountLevels: inputs.accountLevels,
    storageLevels: inputs.storageLevels,
    seed: inputs.seed,
  };
}

/** What a secure-trie proof of the raw key proves under `root`: the leaf's value, or null for an absent key. */
async function provenValue(rawKey: Hex, proof: Hex[], root: Hex): Promise<Hex | null> {
  const value = await verifyMerkleProof(
    hexToBytes(rawKey),
    proof.map((node) => hexToBytes(node)),
    { root: hexToBytes(root), useKeyHashing: true },
  );
  return value === null ? null : bytesToHex(value);
}

/** Branch nodes (17 items) on a proof whose 16 children are all there, hashed or inline. */
function fullBranches(proof: Hex[]): number {
  return proof.filter((node) => {
    const items = fromRlp(node);
    return Array.isArray(items) && items.length === 17 && items.slice(0, 16).every((child) => child !== "0x");
  }).length;
}

/** eth_getProof's order: the root node first (its hash is the root), a leaf last (hex-prefix flag 2 or 3). */
function expectRootFirstLeafLast(proof: Hex[], root: Hex, label: string): void {
  expect(keccak256(proof[0]), `${label}: the first node is the root`).to.equal(root);
  const last = fromRlp(proof[proof.length - 1]) as Hex[];
  expect(last.length, `${label}: the last node has two items`).to.equal(2);
  expect(["2", "3"], `${label}: the last node is a leaf`).to.include(last[0].charAt(2));
}

describe("mainnet-shaped storage proofs (src/bench/deep-trie.ts, test/fixtures)", function () {
  describe("Scroll's mainnet eth_getProof cases (mainnet-proofs.json)", function () {
    it("prove each account under its state root, its storage root in the leaf, and the slot's 32-byte value", async function () {
      expect(mainnetCases).to.have.length(4);
      for (const fixture of mainnetCases) {
        const label = `block ${fixture.block}`;
        const account = await provenValue(fixture.account, fixture.accountProof, fixture.stateRoot);
        expect(account, label).to.not.equal(null);
        expect((fromRlp(account!) as Hex[])[2], `${label}: storage root`).to.equal(fixture.storageRoot);
        const stored = await provenValue(fixture.storageKey, fixture.storageProof, fixture.storageRoot);
        expect(stored, label).to.not.equal(null);
        expect(pad(fromRlp(stored!, "hex") as Hex, { size: 32 }), `${label}: value`).to.equal(fixture.value);
        expectRootFirstLeafLast(fixture.accountProof, fixture.stateRoot, `${label} account`);
        expectRootFirstLeafLast(fixture.storageProof, fixture.storageRoot, `${label} storage`);
      }
    });

    it("are refused under another root, so the check above can fail", async function () {
      const [first, second] = mainnetCases;
      let refused = false;
      await provenValue(first.account, first.accountProof, second.stateRoot).catch(() => (refused = true));
      expect(refused).to.equal(true);
    });
  });

  describe("the deep cases (deep-proofs.json)", function () {
    it("are rebuilt byte for byte from their inputs", async function () {
      expect(deepCases.map((fixture) => fixture.name)).to.deep.equal(["erc20-balances", "marginal-node-cost"]);
      for (const fixture of deepCases) {
        expect(await buildDeepStateProof(requestOf(fixture.inputs)), fixture.name).to.deep.equal(fixture.outputs);
      }
    });

    it("keep each slot at the OpenZeppelin ERC-20 balance slot of its owner, keccak256(abi.encode(owner, 0))", function () {
      for (const fixture of deepCases) {
        for (const slot of fixture.inputs.slots) {
          const key = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [slot.owner, 0n]));
          expect(slot.key, `${fixture.name} ${slot.owner}`).to.equal(key);
        }
      }
    });

    it("prove the account leaf and every slot as secure-trie proofs of the raw keys, null for an absent slot", async function () {
      for (const fixture of deepCases) {
        const request = requestOf(fixture.inputs);
        const { outputs } = fixture;
        const account = await provenValue(request.account, outputs.accountProof, outputs.stateRoot);
        expect(account, `${fixture.name} account`).to.equal(encodeAccount(request.accountFields, outputs.storageRoot));
        for (const [index, slot] of request.slots.entries()) {
          const stored = await provenValue(slot.key, outputs.storageProofs[index], outputs.storageRoot);
          const label = `${fixture.name} slot ${index}`;
          if (slot.value === 0n) {
            expect(stored, label).to.equal(null);
          } else {
            expect(numberToHex(BigInt(fromRlp(stored!, "hex") as Hex), { size: 32 }), label).to.equal(fixture.inputs.slots[index].value);
          }
        }
      }
      // The erc20-balances case holds an exclusion proof, so a verifier's absent branch is exercised too.
      expect(deepCases[0].inputs.slots.filter((slot) => BigInt(slot.value) === 0n)).to.have.length(1);
    });

    it("cross at least the asked number of full 16-child branches, root first and leaf last as eth_getProof gives them", function () {
      for (const fixture of deepCases) {
        const { inputs, outputs } = fixture;
        expect(fullBranches(outputs.accountProof), `${fixture.name} account`).to.be.at.least(inputs.accountLevels);
        expectRootFirstLeafLast(outputs.accountProof, outputs.stateRoot, `${fixture.name} account`);
        outputs.storageProofs.forEach((proof, index) => {
          expect(fullBranches(proof), `${fixture.name} slot ${index}`).to.be.at.least(inputs.storageLevels);
          expectRootFirstLeafLast(proof, outputs.storageRoot, `${fixture.name} slot ${index}`);
        });
      }
      // The marginal case differs from the first by whole nodes: four more on the account's path, three on the slot's.
      const [shallow, deep] = deepCases;
      expect(deep.outputs.accountProof.length - shallow.outputs.accountProof.length).to.equal(4);
      expect(deep.outputs.storageProofs[0].length - shallow.outputs.storageProofs[0].length).to.equal(3);
    });
  });

  describe("buildDeepStateProof", function () {
    const account: Hex = "0x000000000000000000000000000000000000cafe";
    const accountFields = { nonce: 3n, balance: 10n ** 18n, codeHash: EMPTY_CODE_HASH };
    const slot = (index: number) => pad(numberToHex(index), { size: 32 });

    it("at zero levels gives the lone leaf a trie of one key has, and the empty storage root for no slots", async function () {
      const proof = await buildDeepStateProof({ account, accountFields, slots: [], accountLevels: 0, storageLevels: 0, seed: 1 });
      expect(proof.storageRoot).to.equal(EMPTY_TRIE_ROOT);
      expect(proof.accountProof).to.have.length(1);
      expect(proof.storageProofs).to.deep.equal([]);
      expect(await provenValue(account, proof.accountProof, proof.stateRoot)).to.equal(encodeAccount(accountFields, EMPTY_TRIE_ROOT));
    });

    it("depends on the seed for its fillers only: another seed, other roots, the same proven values", async function () {
      const request = { account, accountFields, slots: [{ key: slot(0), value: 7n }], accountLevels: 3, storageLevels: 2 };
      const [one, other] = await Promise.all([buildDeepStateProof({ ...request, seed: 1 }), buildDeepStateProof({ ...request, seed: 2 })]);
      expect(other.stateRoot).to.not.equal(one.stateRoot);
      for (const proof of [one, other]) {
        expect(fromRlp((await provenValue(slot(0), proof.storageProofs[0], proof.storageRoot))!, "hex")).to.equal("0x07");
        expect(fullBranches(proof.accountProof)).to.equal(3);
      }
    });

    it("fills the branches on the path of an absent slot too, down to a neighbour's leaf", async function () {
      const proof = await buildDeepStateProof({
        account,
        accountFields,
        slots: [{ key: slot(9), value: 0n }],
        accountLevels: 1,
        storageLevels: 6,
        seed: 3,
      });
      expect(await provenValue(slot(9), proof.storageProofs[0], proof.storageRoot)).to.equal(null);
      expect(fullBranches(proof.storageProofs[0])).to.be.at.least(6);
      expectRootFirstLeafLast(proof.storageProofs[0], proof.storageRoot, "absent slot");
    });

    it("refuses a malformed request", async function () {
      const valid: DeepStateProofRequest = { account, accountFields, slots: [], accountLevels: 1, storageLevels: 1, seed: 1 };
      const refusals: Array<[string, Partial<DeepStateProofRequest>]> = [
        ["a 19-byte account", { account: "0x00000000000000000000000000000000000000" }],
        ["a 31-byte key", { slots: [{ key: `0x${"11".repeat(31)}`, value: 1n }] }],
        [
          "one key twice",
          {
            slots: [
              { key: slot(1), value: 1n },
              { key: slot(1), value: 2n },
            ],
          },
        ],
        ["a value above uint256", { slots: [{ key: slot(1), value: 1n << 256n }] }],
        ["fractional levels", { accountLevels: 1.5 }],
        ["a negative seed", { seed: -1 }],
      ];
      for (const [label, change] of refusals) {
        let error: unknown;
        await buildDeepStateProof({ ...valid, ...change }).catch((thrown: unknown) => (error = thrown));
        expect(error, label).to.be.instanceOf(RangeError);
      }
    });
  });
});
