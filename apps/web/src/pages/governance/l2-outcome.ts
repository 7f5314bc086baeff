import { parseEventLogs, zeroHash, type Address, type Hex, type Log, type PublicClient } from "viem";

import { protocolTimelockAbi } from "../../generated/abis";
import { crossDomainMessageHash, L1_MESSENGER_ABI, L2_MESSENGER_ABI, type SentMessage } from "@avn/protocol/governance/proposal";
import { timelockSalt } from "@avn/protocol/governance/rules";
import type { GovernanceAddresses } from "./addresses";
import type { L2Outcome, ProposalStatus } from "./proposal-status";

/**
 * The message the L1 messenger sent to `executor` in a transaction, from its receipt's logs: the
 * messenger's `SentMessage`, and the value from the `SentMessageExtension1` it emits right after it (an
 * extension that follows a message to another target is that message's).
 */
export function sentMessageTo(receipt: { logs: readonly Log[] }, l1Messenger: Address, executor: Address): SentMessage | undefined {
  const logs = receipt.logs.filter((log) => log.address.toLowerCase() === l1Messenger.toLowerCase());
  let sent: SentMessage | undefined;
  // Whether the messenger's latest `SentMessage` was the one to the executor.
  let latestIsSent = false;
  for (const event of parseEventLogs({ abi: L1_MESSENGER_ABI, logs })) {
    if (event.eventName === "SentMessage") {
      latestIsSent = event.args.target.toLowerCase() === executor.toLowerCase();
      if (!latestIsSent) continue;
      const { target, sender, message, messageNonce: nonce, gasLimit } = event.args;
      sent = { target, sender, message, nonce, gasLimit, value: 0n };
    } else if (event.eventName === "SentMessageExtension1" && latestIsSent && sent !== undefined) {
      sent = { ...sent, value: event.args.value };
    }
  }
  return sent;
}

/**
 * Whether the L2 messenger relayed the message an executed proposal sent, found as the CLI finds it: the
 * timelock's operation id of the proposal, its `CallExecuted` event, that transaction's messenger events,
 * their message hash, and the L2 messenger's record of it (`successfulMessages`, `failedMessages`).
 */
export async function readL2Outcome(
  clients: { l1: PublicClient; l2: PublicClient },
  addresses: GovernanceAddresses,
  proposal: Pick<ProposalStatus, "targets" | "values" | "calldatas" | "descriptionHash" | "deadlineBlock" | "batch">,
): Promise<L2Outcome> {
  const { l1, l2 } = clients;
  const operationId = await l1.readContract({
    address: addresses.timelock,
    abi: protocolTimelockAbi,
    functionName: "hashOperationBatch",
    args: [proposal.targets, proposal.values, proposal.calldatas, zeroHash, timelockSalt(addresses.governor, proposal.descriptionHash)],
  });
  const [executed] = await l1.getContractEvents({
    address: addresses.timelock,
    abi: protocolTimelockAbi,
    eventName: "CallExecuted",
    args: { id: operationId },
    // Executed after its vote ended: the search starts there, not at the deployment.
    fromBlock: proposal.deadlineBlock,
    toBlock: "latest",
  });
  if (executed === undefined) return { kind: "no message" };
  const receipt = await l1.getTransactionReceipt({ hash: executed.transactionHash });
  const sent = sentMessageTo(receipt, addresses.l1Messenger, addresses.executor);
  if (sent === undefined) return { kind: "no message" };
  const messageHash = crossDomainMessageHash(sent);
  const messenger = { address: addresses.l2Messenger, abi: L2_MESSENGER_ABI } as const;
  const [succeeded, failed, l2Latest] = await Promise.all([
    l2.readContract({ ...messenger, functionName: "successfulMessages", args: [messageHash] }),
    l2.readContract({ ...messenger, functionName: "failedMessages", args: [messageHash] }),
    l2.getBlock({ blockTag: "latest" }),
  ]);
  return relayOutcome(messageHash, { succeeded, failed, l2Time: l2Latest.timestamp }, proposal.batch?.deadline);
}

/**
 * What became of a message on L2, from the L2 messenger's records of it and the L2's latest block time,
 * given its batch's deadline (undefined: not a batch with one).
 */
export function relayOutcome(
  messageHash: Hex,
  l2: { succeeded: boolean; failed: boolean; l2Time: bigint },
  deadline: bigint | undefined,
): Exclude<L2Outcome, { kind: "no message" }> {
  // A replayed message is in both: its success is what counts.
  if (l2.succeeded) return { kind: "executed", messageHash };
  // The executor refuses a batch past its deadline (by the L2's clock): neither a relay nor a replay can run it then.
  if (deadline !== undefined && l2.l2Time > deadline) return { kind: "expired", messageHash };
  if (l2.failed) return { kind: "failed", messageHash };
  return { kind: "awaiting relay", messageHash };
}
