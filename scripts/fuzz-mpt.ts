// Differential fuzzing of the storage proof verifier's calldata trie walk (CalldataMpt) against Bedrock's MerkleTrie,
// on Hardhat's in-process network: every single-byte corruption of the real mainnet proofs in test/fixtures, then
// random tries (inclusion, exclusion, corrupted and reshaped proofs). Prints the counts; exits 1 on any
// disagreement. Usage: npm run fuzz:mpt [-- cases seed], default 100,000 cases, seed 49 (FUZZ_CASES, FUZZ_SEED).
import { network } from "hardhat";

import { deployTrieWalkers, fuzzTrieWalk, mainnetProofs, type FuzzReport } from "../src/bench/mpt-fuzz.ts";

const cases = Number(process.env.FUZZ_CASES ?? 100_000);
const seed = Number(process.env.FUZZ_SEED ?? 49);
if (!Number.isSafeInteger(cases) || cases < 1 || !Number.isSafeInteger(seed)) throw new Error("FUZZ_CASES and FUZZ_SEED must be integers");

const { ethers } = await network.create();
const started = Date.now();
let lastPrint = 0;
const progress = (report: FuzzReport) => {
  if (report.cases - lastPrint < 10_000) return;
  lastPrint = report.cases;
  console.log(`  ${report.cases} cases, ${report.disagreements} disagreements (${Math.round((Date.now() - started) / 1000)} s)`);
};
const report = await fuzzTrieWalk(await deployTrieWalkers(ethers), { cases, seed, fixtures: await mainnetProofs(), onProgress: progress });
console.log(`CalldataMpt vs Bedrock MerkleTrie, seed ${seed}: ${report.cases} cases, ${report.disagreements} disagreements`);
console.log(
  `  and, counted apart, ${report.bedrockInlineRefusals} geth-form proofs (an inline node not listed again) that the walk verifies to ` +
    "@ethereumjs/mpt's value and Bedrock refuses",
);
for (const [kind, count] of Object.entries(report.byKind)) console.log(`  ${kind}: ${count}`);
console.log(
  `  random tries: ${report.tries}; proofs crossing an extension: ${report.extensionProofs}, an inline node: ${report.inlineProofs}`,
);
for (const example of report.examples) console.log(`  DISAGREEMENT ${example}`);
process.exitCode = report.disagreements === 0 ? 0 : 1;
