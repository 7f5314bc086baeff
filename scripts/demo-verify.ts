// `npm run demo:verify` (with `npm start` running): opens on-chain verification jobs for three demo
// holdings (the ERC-20 balance above 2^53, the SPL owner with two token accounts, and the owner of 1,000
// token accounts, whose 165,000-byte QueryResult the registry keeps as its hash), waits until the circuit
// nodes finalize them, and prints each stored result beside the API's answer for the same query; then
// asks the API for a quorum-signed attestation of the same holding, checks it with the deployed verifier
// and records it (time and gas of each path side by side); then claims the example game item as the demo
// holder. Then it evaluates the stack file's demo conditions (POST /api/conditions?attest=true), checks
// each quorum-signed verdict with the deployed verifier, and claims a game item with a verdict as the demo
// collector, whose Solana wallet is linked to its Ethereum one.
import path from "node:path";

import { GameItem__factory } from "../typechain-types/index.ts";
import { MANY_ACCOUNTS } from "../src/devnet/demo-holdings.ts";
import { attestAndRecord } from "../src/devnet/demo-attest.ts";
import { claimGameItem, verifyOnChainAndByApi, type DemoQuery } from "../src/devnet/demo-verify.ts";
import { claimItemWithVerdict, evaluateDemoCondition } from "../src/devnet/demo-conditions.ts";
import { attestDirectlyOnEas, exportVerdictToEas } from "../src/devnet/demo-eas.ts";
import { runDelegationDemo } from "../src/devnet/demo-delegations.ts";
import { devnetProvider } from "../src/devnet/op-devnet.ts";
import { readDemoStack } from "../src/common/stack-file.ts";

const stack = await readDemoStack(path.resolve(import.meta.dirname, "..")).catch((error: Error) => {
  console.error(error.message);
  return process.exit(1);
});
const l2 = devnetProvider(stack.l2.rpcUrl, stack.l2.chainId);
const l1 = devnetProvider(stack.l1!.rpcUrl, stack.l1!.chainId);
const evm = stack.demo.evm[0];
const svm = stack.demo.svm[0];
const manyAccounts = stack.demo.svm.find((entry) => entry.note?.startsWith(`${MANY_ACCOUNTS} token accounts`));
const svmQuery = (entry: typeof svm, label: string) => ({
  label: `${label} ${entry.token_mint_address} of ${entry.owner_address}`,
  query: { chain: "svm" as const, owner_address: entry.owner_address, token_mint_address: entry.token_mint_address },
  seeded: entry.balance,
});
const queries: Array<{ label: string; query: DemoQuery; seeded: string }> = [
  {
    label: `ERC-20 ${evm.contract_address} of ${evm.user_address}`,
    query: { chain: "evm", user_address: evm.user_address, contract_address: evm.contract_address },
    seeded: evm.balance,
  },
  svmQuery(svm, "SPL mint"),
  ...(manyAccounts === undefined ? [] : [svmQuery(manyAccounts, `SPL mint (${MANY_ACCOUNTS} token accounts)`)]),
];
let allMatch = true;
try {
  for (const { label, query, seeded } of queries) {
    console.log(`\n${label}\n  opening a job as the consumer and waiting for the nodes…`);
    const result = await verifyOnChainAndByApi(stack, l2, query);
    const same = result.onChain.balance === result.api.balance && result.onChain.queryResultHash === result.api.queryResultHash;
    allMatch &&= same && String(result.onChain.balance) === seeded;
    console.log(`  job ${result.jobId} finalized in ${(result.ms / 1000).toFixed(1)} s (source block/slot ${result.onChain.sourceBlock})`);
    console.log(`  on-chain balance ${result.onChain.balance}`);
    console.log(`  API balance      ${result.api.balance}`);
    console.log(`  seeded balance   ${seeded}`);
    console.log(
      `  QueryResult      the API's ${result.api.queryResult.replace(/^0x/, "").length / 2} bytes hash to ${result.api.queryResultHash}`,
    );
    console.log(`  on-chain hash    ${result.onChain.queryResultHash} (${same ? "identical" : "DIFFERENT"})`);
    console.log(
      `  job path         ${(result.ms / 1000).toFixed(1)} s; gas: request ${result.gas.request}, node transactions ${result.gas.nodes}`,
    );
    const attested = await attestAndRecord(stack, l2, query);
    allMatch &&=
      attested.valid && attested.attestation.balance === result.api.balance && attested.latest.balance === attested.attestation.balance;
    console.log(
      `  attested path    ${attested.apiMs.toFixed(0)} ms for the API's signed answer (licenses ${attested.licenseIds.join(", ")}), ` +
        `${attested.valid ? "valid" : "NOT VALID"} on-chain (a free view call); recording it: ${attested.recordGas} gas, ` +
        `then latestBalance ${attested.latest.balance}`,
    );
  }
  console.log("\nExample game: the demo holder asks for verification of its ERC-20 balance, then claims an item…");
  const holder = stack.accounts!.demoHolder.address;
  // One item per player: a second run of the demo on the same stack finds it claimed already.
  if (await GameItem__factory.connect(stack.contracts!.l2!.GameItem, l2).hasClaimed(holder)) {
    console.log(`  ${holder} claimed its item in an earlier run (one per player); restart the stack to see the claim again`);
  } else {
    const claim = await claimGameItem(stack, l2);
    console.log(`  job ${claim.jobId} finalized with balance ${claim.verifiedBalance}; item #${claim.tokenId} minted to ${holder}`);
  }

  console.log("\nSigned verdicts: each demo condition of the stack file, asked with ?attest=true and checked on-chain…");
  for (const condition of stack.demo.conditions ?? []) {
    const evaluated = await evaluateDemoCondition(stack, l2, condition.request, true);
    const valid = evaluated.signed?.valid === true;
    allMatch &&= evaluated.verdict === condition.verdict && valid;
    console.log(`  ${condition.note}`);
    console.log(
      `    verdict ${evaluated.verdict} (expected ${condition.verdict}) in ${evaluated.ms.toFixed(0)} ms, ` +
        `${evaluated.leaves === undefined ? "leaves not revealed" : `${evaluated.leaves} leaves`}, ` +
        `signed for licenses ${evaluated.signed!.signatures.flatMap(({ licenseIds }) => licenseIds).join(", ")}: ${valid ? "valid" : "NOT VALID"} on-chain`,
    );
  }
  const firstCondition = stack.demo.conditions?.[0];
  if (firstCondition !== undefined) {
    console.log("\nEAS: the demo collector exports the first signed verdict to EAS through the AttestationExporter…");
    const { signed } = await evaluateDemoCondition(stack, l2, firstCondition.request, true);
    const exported = await exportVerdictToEas(stack, l2, signed!);
    console.log(
      `  UID ${exported.uid} (${exported.gasUsed === undefined ? "exported before: no transaction" : `${exported.gasUsed} gas`})\n` +
        `  EAS.getAttestation: attester ${exported.attester} (the exporter), schema ${exported.schema}`,
    );
    const refusal = await attestDirectlyOnEas(stack, l2);
    allMatch &&= refusal === "InvalidAttestation";
    console.log(`  the same schema attested directly by the collector: ${refusal === undefined ? "ACCEPTED" : `refused (${refusal})`}`);
  }
  console.log("\ndelegate.xyz: the demo holder (a cold wallet) delegates everything to a fresh hot wallet, then revokes…");
  const delegation = await runDelegationDemo(stack, l1, l2);
  for (const [label, state] of [
    ["delegated", delegation.delegated],
    ["revoked  ", delegation.revoked],
  ] as const) {
    console.log(
      `  ${label}: ccq-evm for ${delegation.hot} with include_delegations ${state.withDelegations} (wallets ${state.wallets.join(", ") || "none"}), ` +
        `without ${state.without}; signed verdict with "delegations": true says ${state.verdict}, ${state.verdictValid ? "valid" : "NOT VALID"} on-chain`,
    );
  }
  allMatch &&=
    delegation.delegated.verdict &&
    delegation.delegated.verdictValid &&
    !delegation.revoked.verdict &&
    delegation.revoked.withDelegations === 0n;
  const collector = stack.accounts!.demoCollector.address;
  console.log("\nExample game: the demo collector claims an item with a quorum-signed verdict on the game's condition…");
  if (await GameItem__factory.connect(stack.contracts!.l2!.GameItem, l2).hasClaimed(collector)) {
    console.log(`  ${collector} claimed its item in an earlier run (one per player); restart the stack to see the claim again`);
  } else {
    const claim = await claimItemWithVerdict(stack, l2);
    console.log(
      `  verdict signed in ${claim.verdictMs.toFixed(0)} ms; claimWithCondition used ${claim.gasUsed} gas; item #${claim.tokenId} minted to ${collector}`,
    );
  }
} catch (error) {
  console.error(`demo:verify failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  l2.destroy();
  l1.destroy();
}
if (!allMatch) {
  console.error("\nThe on-chain results and the API's answers differ, or a verdict is not the expected one.");
  process.exitCode = 1;
}
