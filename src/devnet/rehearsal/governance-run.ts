import { Contract, toQuantity, type JsonRpcProvider } from "ethers";

import { waitFor } from "../../common/wait-for.ts";
import { governedContracts } from "../../deploy/two-chain.ts";
import type { OpDevnet } from "../op-devnet.ts";
import { runOperatorCommand, succeeded, type CommandResult } from "./operator-command.ts";
import type { LiveNetworks } from "./live-parameters.ts";
import type { GovernanceStep, RehearsalReport } from "./report.ts";

// Governance's first proposal (accept-admin) through the operator's CLI, `npm run gov`, with the live
// voting delay, period and timelock delay: the L1's clock moved on by mining its blocks, the L2's by time.

export const GOVERNOR_ABI = [
  "function votingDelay() view returns (uint256)",
  "function votingPeriod() view returns (uint256)",
  "function proposalThreshold() view returns (uint256)",
  "function quorumNumerator() view returns (uint256)",
  "function proposalGuardian() view returns (address)",
  "function proposalSnapshot(uint256) view returns (uint256)",
  "function proposalDeadline(uint256) view returns (uint256)",
  "function proposalEta(uint256) view returns (uint256)",
  "function state(uint256) view returns (uint8)",
];
/** Blocks per `anvil_mine` request: each well within a request's timeout. */
const MINE_CHUNK = 2_000n;
const EXECUTED = 7n; // IGovernor.ProposalState.Executed

const gov = (root: string, env: Record<string, string>, ...args: string[]) =>
  runOperatorCommand(root, ["run", "gov", "--", "--network", "testnet", ...args], env);

/**
 * Delegates the supply holder's votes, proposes accept-admin, waits out the voting delay, votes, waits out
 * the period, queues, waits out the timelock, executes, and follows the L2 message until the executor
 * administers the governed contracts. Each step's live duration goes into the report.
 */
export async function firstProposal(
  root: string,
  env: Record<string, string>,
  devnet: OpDevnet,
  l1: Record<string, string>,
  l2: Record<string, string>,
  live: LiveNetworks,
): Promise<RehearsalReport["governance"] & { differences: string[] }> {
  const { l1Provider, l2Provider } = devnet;
  const differences: string[] = [];
  const governor = new Contract(l1["L1#ProtocolGovernor"], GOVERNOR_ABI, l1Provider);
  const timelock = new Contract(l1["L1#ProtocolTimelock"], ["function getMinDelay() view returns (uint256)"], l1Provider);
  const [votingDelay, votingPeriod, timelockDelay] = (await Promise.all([
    governor.getFunction("votingDelay")(),
    governor.getFunction("votingPeriod")(),
    timelock.getFunction("getMinDelay")(),
  ])) as bigint[];
  const steps: GovernanceStep[] = [];
  // The vote's 57,600 blocks go in chunks (MINE_CHUNK), at the live L1's block time, with the devnet's
  // interval mining off meanwhile: with it on, anvil makes each block anvil_mine adds slower than the last
  // (58,000 blocks: 133 s against 36 s with it off, anvil 1.7.1). It is back on afterwards, at the devnet's
  // block time, each transaction now waiting for the next block: anvil cannot restore the mixed mining
  // (a block per transaction too) it started with over RPC.
  const mineL1 = async (blocks: bigint) => {
    await l1Provider.send("evm_setIntervalMining", [0]);
    try {
      for (let left = blocks; left > 0n; left -= MINE_CHUNK) {
        await l1Provider.send("anvil_mine", [toQuantity(left < MINE_CHUNK ? left : MINE_CHUNK), toQuantity(live.l1BlockSeconds)]);
      }
    } finally {
      await l1Provider.send("evm_setIntervalMining", [devnet.l1BlockTime]);
    }
  };

  succeeded(await gov(root, env, "delegate"));
  steps.push({ step: "delegate", liveSeconds: live.l1BlockSeconds, note: "counts from the next L1 block" });
  await mineL1(1n);

  let proposed = await gov(root, env, "propose", "accept-admin", "--note", "Hand the L2 protocol to governance");
  if (proposed.exitCode !== 0) {
    differences.push(
      `\`npm run gov -- --network testnet propose accept-admin\`, as deploy:l2Testnet prints it, was refused: ${lastLine(proposed)}; proposed with --skip-l2-check`,
    );
    proposed = succeeded(
      await gov(root, env, "propose", "accept-admin", "--skip-l2-check", "--note", "Hand the L2 protocol to governance"),
    );
  }
  const proposalId = /Proposal (\d+) made/.exec(proposed.output)?.[1];
  if (proposalId === undefined) throw new Error(`no proposal id in:\n${proposed.output}`);
  const snapshot = (await governor.getFunction("proposalSnapshot")(proposalId)) as bigint;
  steps.push({ step: "propose", liveSeconds: live.l1BlockSeconds, note: `snapshot at L1 block ${snapshot}` });

  // The devnet's stand-in for op-node would set each of the mined blocks in L2's L1Block, one call each
  // (minutes of work for nothing the proposal needs): it pauses, and L1Block jumps to the L1 head before
  // the execution's deposit (`skipL1Attributes`). The deposit relay still drives it for the blocks after.
  await devnet.l1Attributes.stop();
  await mineL1(snapshot - BigInt(await l1Provider.getBlockNumber()) + 1n);
  steps.push({
    step: "voting delay",
    liveSeconds: Number(votingDelay) * live.l1BlockSeconds,
    note: `${votingDelay} blocks, mined with anvil_mine`,
  });
  succeeded(await gov(root, env, "vote", proposalId, "for"));
  steps.push({ step: "vote", liveSeconds: live.l1BlockSeconds, note: "the holder of the supply, for" });

  const deadline = (await governor.getFunction("proposalDeadline")(proposalId)) as bigint;
  await mineL1(deadline - BigInt(await l1Provider.getBlockNumber()) + 1n);
  steps.push({
    step: "voting period",
    liveSeconds: Number(votingPeriod) * live.l1BlockSeconds,
    note: `${votingPeriod} blocks, mined with anvil_mine`,
  });
  succeeded(await gov(root, env, "queue", proposalId));
  steps.push({ step: "queue", liveSeconds: live.l1BlockSeconds, note: "" });

  const eta = (await governor.getFunction("proposalEta")(proposalId)) as bigint;
  await l1Provider.send("anvil_setNextBlockTimestamp", [Number(eta) + 1]);
  await l1Provider.send("evm_mine", []);
  steps.push({ step: "timelock delay", liveSeconds: Number(timelockDelay), note: "anvil_setNextBlockTimestamp past the eta" });

  const contracts = governedContracts({
    StakedToken: l2["L2#StakedToken"],
    NodeLicense: l2["L2#NodeLicense"],
    NodeRegistry: l2["L2#NodeRegistry"],
    VerificationRegistry: l2["L2#VerificationRegistry"],
    RewardPools: l2["L2#RewardPools"],
  });
  // On the live L2 the ten days of the vote pass too: the admin handover's delay is over by then.
  const handoverDue = await adminHandoverDue(l2Provider, contracts);
  const l2Now = (await l2Provider.getBlock("latest"))!.timestamp;
  if (handoverDue > BigInt(l2Now)) {
    await l2Provider.send("evm_increaseTime", [Number(handoverDue) - l2Now + 1]);
    await l2Provider.send("evm_mine", []);
  }

  await skipL1Attributes(devnet);
  succeeded(await gov(root, env, "execute", proposalId));
  const executedOnL1 = ((await governor.getFunction("state")(proposalId)) as bigint) === EXECUTED;
  steps.push({ step: "execute on L1", liveSeconds: live.l1BlockSeconds, note: "" });

  const relayStarted = Date.now();
  const executor = l2["L2#GovernanceExecutor"];
  const adminsAreExecutor = async () => {
    const admins = await Promise.all(
      contracts.map(
        (address) =>
          new Contract(address, ["function defaultAdmin() view returns (address)"], l2Provider).getFunction(
            "defaultAdmin",
          )() as Promise<string>,
      ),
    );
    return admins.every((admin) => admin.toLowerCase() === executor.toLowerCase());
  };
  let executedOnL2 = true;
  await waitFor("the first proposal to take effect on L2", adminsAreExecutor, 10 * 60_000).catch(() => (executedOnL2 = false));
  steps.push({
    step: "relay to L2",
    liveSeconds: 180,
    note: `a deposit: a few minutes live; ${Math.round((Date.now() - relayStarted) / 1000)} s here`,
  });
  const status = await gov(root, env, "status", proposalId);
  const roles = await gov(root, env, "roles");
  return { proposalId, steps, executedOnL1, executedOnL2, status: status.output, roles: roles.output, differences };
}

/** Sets the L1 head's values in L2's L1Block at once and waits until they are mined. */
async function skipL1Attributes(devnet: OpDevnet): Promise<void> {
  const hash = await devnet.l1Attributes.jumpTo(await devnet.l1Provider.getBlockNumber());
  await devnet.l2Provider.waitForTransaction(hash, 1, 120_000);
}

function lastLine(result: CommandResult): string {
  return (
    result.output
      .trim()
      .split("\n")
      .filter((line) => line.startsWith("error"))
      .at(-1) ??
    result.output.trim().split("\n").at(-1) ??
    ""
  );
}

/** When the last of the governed contracts' pending admin handovers may be accepted (0: none pending). */
async function adminHandoverDue(l2Provider: JsonRpcProvider, contracts: string[]): Promise<bigint> {
  let due = 0n;
  for (const address of contracts) {
    const contract = new Contract(address, ["function pendingDefaultAdmin() view returns (address, uint48)"], l2Provider);
    const [, schedule] = (await contract.getFunction("pendingDefaultAdmin")()) as [string, bigint];
    if (schedule > due) due = schedule;
  }
  return due;
}
