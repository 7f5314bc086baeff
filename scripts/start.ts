// `npm start`: the local stack until Ctrl-C. Today: the OP-stack devnet (L1 chain 900, L2 chain 901, the
// OP bridge contracts, deposit relay, output proposer) with the project's contracts deployed by the
// L1 and L2 Ignition modules; the API and the circuit nodes join it as they land.
import path from "node:path";

import { startLocalStackFromCli } from "../src/devnet/run-until-stopped.js";

const projectRoot = path.resolve(import.meta.dirname, "..");
const stack = await startLocalStackFromCli(projectRoot, true);
const { devnet } = stack;
const l1 = stack.stack.contracts?.l1 ?? {};
const l2 = stack.stack.contracts?.l2 ?? {};
const deployer = devnet.accounts.deployer;
console.log(`
Local stack is up.
  L1 (chain ${devnet.l1.chainId})   ${devnet.l1.rpcUrl}
  L2 (chain ${devnet.l2.chainId})   ${devnet.l2.rpcUrl}   ${devnet.l2.wsUrl}
  L1 PrimaryToken         ${l1.PrimaryToken}
${["PrimaryToken", "StakedToken", "NodeLicense", "NodeRegistry", "VerificationRegistry"]
  .map((name) => `  L2 ${name.padEnd(21)}${l2[name]}`)
  .join("\n")}
  Deployer  ${deployer.address} (anvil development account 0: admin, holds the whole primary supply on L1)
  Stack file  ${path.relative(process.cwd(), stack.stackFile)}

Try:  npm run bridge -- deposit-token --amount 1000 --approve      (L1 → L2, a few seconds)
      npm run bridge -- deposit-eth --amount 1
Press Ctrl-C to stop.`);
