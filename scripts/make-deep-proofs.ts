// Writes test/fixtures/deep-proofs.json: state and storage proofs as deep as mainnet's, from
// src/bench/deep-trie.ts, for the storage-proof verifier's gas benchmark and tests (issue 49). Each case keeps
// its inputs beside its outputs, so that test/ts/proofs/DeepTrie.ts rebuilds it and expects the same bytes.
//
//   node scripts/make-deep-proofs.ts
import { writeFileSync } from "node:fs";
import path from "node:path";

import { format, resolveConfig } from "prettier";
import { encodeAbiParameters, keccak256, numberToHex, stringToHex, type Hex } from "viem";

import { buildDeepStateProof, type DeepStateProofRequest } from "../src/bench/deep-trie.ts";

const OUTPUT = path.resolve(import.meta.dirname, "..", "test", "fixtures", "deep-proofs.json");
const ETHER = 10n ** 18n;

/** OpenZeppelin's ERC-20 keeps `_balances` at slot 0: an owner's balance is at keccak256(abi.encode(owner, 0)). */
function balanceSlotOf(owner: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [owner, 0n]));
}

/** A contract account: nonce 1 (EIP-161), no ether, and a code hash that stands for some token's code. */
const TOKEN_ACCOUNT = { nonce: 1n, balance: 0n, codeHash: keccak256(stringToHex("deep-proofs fixture: ERC-20 runtime code")) };

interface FixtureCase {
  name: string;
  purpose: string;
  /** The holder behind each slot, in the slots' order (documentation: the builder sees only the keys). */
  owners: Hex[];
  request: DeepStateProofRequest;
}

function erc20Case(name: string, purpose: string, account: Hex, balances: Array<[Hex, bigint]>, levels: [number, number], seed: number) {
  return {
    name,
    purpose,
    owners: balances.map(([owner]) => owner),
    request: {
      account,
      accountFields: TOKEN_ACCOUNT,
      slots: balances.map(([owner, value]) => ({ key: balanceSlotOf(owner), value })),
      accountLevels: levels[0],
      storageLevels: levels[1],
      seed,
    },
  } satisfies FixtureCase;
}

const CASES: FixtureCase[] = [
  erc20Case(
    "erc20-balances",
    "An ERC-20 as deep as a busy mainnet token: 8 full branches to the account, 5 to each of 4 held balances and 1 owner without one (an exclusion proof).",
    "0x00000000000000000000000000000000000a11ce",
    [
      ["0x1111111111111111111111111111111111111111", 1n * ETHER],
      ["0x2222222222222222222222222222222222222222", 2n * ETHER],
      ["0x3333333333333333333333333333333333333333", 3n * ETHER],
      ["0x4444444444444444444444444444444444444444", 4n * ETHER],
      ["0x5555555555555555555555555555555555555555", 0n],
    ],
    [8, 5],
    49,
  ),
  erc20Case(
    "marginal-node-cost",
    "Deeper than mainnet (12 account levels, 8 storage levels, one balance): against erc20-balances, the gas of one more full branch node.",
    "0x0000000000000000000000000000000000000b0b",
    [["0x1111111111111111111111111111111111111111", 1n * ETHER]],
    [12, 8],
    50,
  ),
];

const fixtureCases = [];
for (const fixture of CASES) {
  const { request } = fixture;
  const outputs = await buildDeepStateProof(request);
  fixtureCases.push({
    name: fixture.name,
    purpose: fixture.purpose,
    // Integers as strings (JSON has no bigint); slot values as the 32-byte words eth_getProof and a verifier give.
    inputs: {
      account: request.account,
      accountFields: {
        nonce: request.accountFields.nonce.toString(),
        balance: request.accountFields.balance.toString(),
        codeHash: request.accountFields.codeHash,
      },
      slots: request.slots.map((slot, index) => ({
        owner: fixture.owners[index],
        key: slot.key,
        value: numberToHex(slot.value, { size: 32 }),
      })),
      accountLevels: request.accountLevels,
      storageLevels: request.storageLevels,
      seed: request.seed,
    },
    outputs,
  });
  const bytesOf = (nodes: Hex[]) => nodes.reduce((total, node) => total + (node.length - 2) / 2, 0);
  const storage = outputs.storageProofs.map((nodes) => `${nodes.length} nodes / ${bytesOf(nodes)} B`).join(", ");
  console.log(`${fixture.name}: account ${outputs.accountProof.length} nodes / ${bytesOf(outputs.accountProof)} B; storage ${storage}`);
}

const fixture = {
  description:
    "Secure-trie proofs shaped like mainnet's (full 16-child branches on the proven paths), built by src/bench/deep-trie.ts; " +
    "the filler entries have no preimage. Regenerate with `node scripts/make-deep-proofs.ts`. A slot value of zero is absent " +
    "from the trie and its proof is an exclusion proof.",
  cases: fixtureCases,
};
// Formatted as `npm run format` would, so that regenerating leaves format:check clean.
const text = await format(JSON.stringify(fixture), { ...(await resolveConfig(OUTPUT)), parser: "json" });
writeFileSync(OUTPUT, text);
console.log(`wrote ${path.relative(process.cwd(), OUTPUT)}`);
