import type { StackFile } from "../../src/common/stack-file.ts";
import type { TestDevnet } from "./devnet.ts";

/**
 * The stack file's view of a test devnet with the contracts deployed, without the verification network:
 * its chains, the OP contracts and the project's (governance's included), which is what the web app's
 * configuration is built from (`webConfigFromStack`).
 */
export function stackOfTestDevnet(test: TestDevnet): StackFile {
  const { devnet, deployment } = test;
  if (deployment === undefined) throw new Error("the test devnet has no contracts deployed (start it with deploy: true)");
  const { adminHandovers: _pending, ...l2Contracts } = deployment.l2;
  return {
    l1: { chainId: devnet.l1.chainId, rpcUrl: devnet.l1.rpcUrl },
    l2: { chainId: devnet.l2.chainId, rpcUrl: devnet.l2.rpcUrl, wsUrl: devnet.l2.wsUrl },
    contracts: { l1: { ...devnet.l1Contracts, ...deployment.l1 }, l2: { ...devnet.l2Contracts, ...l2Contracts } },
    accounts: { ...devnet.accounts },
  };
}
