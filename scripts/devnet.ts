// `npm run devnet`: the local OP-stack devnet alone (two anvil chains, the OP bridge contracts, the deposit
// relay and the output proposer) until Ctrl-C. Deploy the project's contracts onto it with
// `npm run deploy:devnet`; `npm start` does both.
import path from "node:path";

import { startLocalStackFromCli } from "../src/devnet/run-until-stopped.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const stack = await startLocalStackFromCli(projectRoot, false);
const { devnet } = stack;
console.log(`
Devnet is up.
  L1      ${devnet.l1.rpcUrl} (chain ${devnet.l1.chainId})
  L2      ${devnet.l2.rpcUrl} (chain ${devnet.l2.chainId}, ${devnet.l2.wsUrl})
  Withdrawals are finalizable ${devnet.finalizationPeriodSeconds} s after their proof.
  Stack file  ${path.relative(process.cwd(), stack.stackFile)} (OP contract addresses, development accounts)

Try:  npm run bridge -- deposit-eth --amount 1
      npm run deploy:devnet      (the project's contracts)
Press Ctrl-C to stop.`);
