import path from "node:path";

import type { StackFile } from "../../src/common/stack-file.ts";
import { LOCAL_STACK_API_WORKERS } from "../../src/devnet/local-stack.ts";
import { startVerificationNetwork, type VerificationNetwork } from "../../src/devnet/verification-network.ts";
import type { TestDevnet } from "./devnet.ts";
import { stackOfTestDevnet } from "./stack.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

/**
 * The verification network of `npm start` (demo holdings, three licensed nodes, the API as two processes) on a test devnet
 * that has the contracts deployed, with `nodeEnv` for the nodes (tests shorten their intervals), and the
 * stack file's view of it all.
 */
export async function startTestVerificationNetwork(
  test: TestDevnet,
  workDirName: string,
  nodeEnv: Record<string, string>,
): Promise<{ network: VerificationNetwork; stack: StackFile }> {
  const { devnet, deployment } = test;
  if (deployment === undefined) throw new Error("the test devnet has no contracts deployed (start it with deploy: true)");
  const { adminHandovers: _none, ...l2Contracts } = deployment.l2;
  const network = await startVerificationNetwork({
    projectRoot,
    workDir: path.join(test.stateDir, workDirName),
    l1: devnet.l1,
    l2: devnet.l2,
    deployer: devnet.accounts.deployer,
    contracts: { l1PrimaryToken: deployment.l1PrimaryToken, l1StandardBridge: devnet.l1Contracts.L1StandardBridge, l2: l2Contracts },
    apiPort: 0,
    // As `npm start` runs it: several API processes, the hub's rounds crossing between them.
    apiWorkers: LOCAL_STACK_API_WORKERS,
    nodeEnv,
    // The hub waits up to 15 s for a quorum of signatures, not the 3 s it is configured with by default: under
    // npm test's load (four processes on two cores) the nodes' reads for a demo condition once took longer, and
    // the API answered 503. These tests check what is signed; `npm run bench:attest` measures how fast.
    apiEnv: { ATTESTATION_DEADLINE_MS: "15000" },
    onProgress: () => undefined,
  });
  const base = stackOfTestDevnet(test);
  const stack: StackFile = {
    ...base,
    contracts: { l1: base.contracts!.l1, l2: { ...base.contracts!.l2, ...network.stack.contracts.l2 } },
    accounts: { ...base.accounts, ...network.stack.accounts },
    api: network.stack.api,
    demo: network.stack.demo,
    nodes: network.stack.nodes,
  };
  return { network, stack };
}
