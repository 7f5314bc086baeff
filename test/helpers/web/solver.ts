import path from "node:path";

import type { StackFile } from "../../../src/common/stack-file.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import {
  fundSolver,
  SOLVER_ACCOUNT,
  STACK_SOLVER_MIN_FEE_BPS,
  startStackSolver,
  type StackSolver,
} from "../../../src/devnet/stack-solver.ts";
import type { TestDevnet } from "../devnet.ts";
import { stackOfTestDevnet } from "../stack.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/**
 * The intent layer's solver on a test devnet, as `npm start` runs it (`startLocalSolver` in src/devnet/local-stack.ts):
 * its account funded from the deployer (ETH and primary tokens on L1, L2 ether through the standard bridge), then
 * `npm run solver` in its own process, with its journal and log under the devnet's state folder. Without rebalancing:
 * its inventory is far above what a test pays out, and a withdrawal of its own would wait on the shared devnet's
 * hour-long challenge period. `stack` is the devnet's stack file with the solver in it, as `npm start` writes it (so
 * `webConfigFromStack` gives the app its fee).
 */
export async function startTestSolver(net: TestDevnet, name: string): Promise<{ solver: StackSolver; stack: StackFile }> {
  if (net.deployment === undefined) throw new Error("the test devnet has no contracts deployed (start it with deploy: true)");
  const account = devAccount(SOLVER_ACCOUNT);
  const l1 = devnetProvider(net.devnet.l1.rpcUrl, net.devnet.l1.chainId);
  try {
    await fundSolver({
      l1,
      bridgeNetwork: net.bridgeNetwork,
      deployer: net.devnet.accounts.deployer,
      solver: account.address,
      l1PrimaryToken: net.deployment.l1PrimaryToken,
    });
  } finally {
    l1.destroy();
  }
  const solver = await startStackSolver({
    projectRoot,
    stateDir: path.join(net.stateDir, `${name}-solver`),
    logFile: path.join(net.stateDir, `${name}-solver.log`),
    l1: net.devnet.l1,
    l2: net.devnet.l2,
    originSettler: net.deployment.l2.OriginSettler,
    l1OriginSettler: net.deployment.l1.OriginSettler,
    opContracts: net.devnet.l1Contracts,
    account,
    env: { SOLVER_REBALANCE: "false" },
  });
  const stack: StackFile = {
    ...stackOfTestDevnet(net),
    solver: { address: account.address, pid: solver.process.child.pid!, logFile: solver.logFile, minFeeBps: STACK_SOLVER_MIN_FEE_BPS },
  };
  return { solver, stack };
}
