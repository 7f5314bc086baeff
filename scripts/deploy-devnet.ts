// `npm run deploy:devnet`: deploys modules L1 and L2 on the running devnet (`npm run devnet`) with
// deploy/parameters/devnetL1.json and devnetL2.json, and records the addresses in the stack file.
// Ignition's journal (deploy/deployments/chain-900, chain-901) makes a second run a no-op.
import path from "node:path";

import { deployOnDevnet } from "../src/devnet/local-stack.js";
import { readStackFile, stackFilePath, writeStackFile } from "../src/devnet/stack-file.js";

const stackFile = stackFilePath(path.resolve(import.meta.dirname, ".."));
const stack = await readStackFile(stackFile).catch(() => {
  console.error("No devnet is running (.devnet/stack.json not found): start one with `npm run devnet`.");
  process.exit(1);
});
if (stack.l1 === undefined || stack.l2 === undefined) {
  console.error("The stack file names no L1/L2 pair: start the devnet with `npm run devnet`.");
  process.exit(1);
}
const deployed = await deployOnDevnet({ l1: stack.l1, l2: stack.l2 });
const { adminHandovers: _none, ...l2 } = deployed.l2;
stack.contracts = {
  l1: { ...stack.contracts?.l1, PrimaryToken: deployed.l1PrimaryToken },
  l2: { ...stack.contracts?.l2, ...l2 },
};
await writeStackFile(stackFile, stack);
console.log(`L1 PrimaryToken ${deployed.l1PrimaryToken}`);
for (const [name, address] of Object.entries(l2)) console.log(`L2 ${name.padEnd(21)}${address}`);
