// `npm run deploy:devnet`: deploys modules L1, L2 and L1Intents on the running devnet (`npm run devnet`) with
// deploy/parameters/devnetL1.json and devnetL2.json, records the addresses in the stack file, and passes
// governance's first proposal (the executor accepts the admin role of the L2 contracts).
// Ignition's journal (deploy/deployments/chain-900, chain-901) makes a second run a no-op.
import path from "node:path";

import { placeUnderGovernance } from "../src/devnet/governance-setup.ts";
import { devnetGovernanceAddresses } from "../src/governance/network.ts";
import { deployOnDevnet } from "../src/devnet/local-stack.ts";
import { readStackFile, stackFilePath, writeStackFile } from "../src/common/stack-file.ts";

const stackFile = stackFilePath(path.resolve(import.meta.dirname, ".."));
const stack = await readStackFile(stackFile).catch(() => {
  console.error("No devnet is running (.devnet/stack.json not found): start one with `npm run devnet`.");
  process.exit(1);
});
if (stack.l1 === undefined || stack.l2 === undefined) {
  console.error("The stack file names no L1/L2 pair: start the devnet with `npm run devnet`.");
  process.exit(1);
}
const l1Messenger = stack.contracts?.l1?.L1CrossDomainMessenger;
if (l1Messenger === undefined) {
  console.error("The stack file names no L1CrossDomainMessenger: start the devnet with `npm run devnet`.");
  process.exit(1);
}
const deployed = await deployOnDevnet({ l1: stack.l1, l2: stack.l2, l1Contracts: { L1CrossDomainMessenger: l1Messenger } });
const { adminHandovers, ...l2 } = deployed.l2;
stack.contracts = {
  l1: { ...stack.contracts?.l1, ...deployed.l1 },
  l2: { ...stack.contracts?.l2, ...l2 },
};
await writeStackFile(stackFile, stack);
for (const [name, address] of Object.entries(deployed.l1)) console.log(`L1 ${name.padEnd(21)}${address}`);
for (const [name, address] of Object.entries(l2)) console.log(`L2 ${name.padEnd(21)}${address}`);
if (adminHandovers.length > 0) {
  const deployer = stack.accounts?.deployer;
  if (deployer === undefined) throw new Error("The stack file names no deployer account");
  console.log("Handing the L2 contracts to governance (its first proposal, voted by the deployer's tokens)…");
  const id = await placeUnderGovernance({
    l1: stack.l1,
    l2: stack.l2,
    voter: deployer,
    addresses: devnetGovernanceAddresses(stack.contracts),
  });
  console.log(`Proposal ${id} executed: the governance executor ${l2.GovernanceExecutor} administers the L2 contracts.`);
}
