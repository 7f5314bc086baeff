import type { Hash, PublicClient, TransactionReceipt } from "viem";
import { chainConfig, extractWithdrawalMessageLogs, getWithdrawals, type GetWithdrawalStatusReturnType } from "viem/op-stack";
import type { Config } from "wagmi";

import type { AppSettings } from "../../app-context";
import { l2OutputOracleAbi, optimismPortalAbi } from "../../generated/abis";
import { opPublicClients, opTargetChain, type OpTargetChain } from "./shared";

/** A withdrawal message as viem's op-stack actions take it. */
export type Withdrawal = ReturnType<typeof getWithdrawals>[number];

/** Statuses move on their own (outputs get posted, challenge periods run out), so they are polled. */
export const STATUS_REFRESH_MS = 5_000;
const MESSAGE_PASSER = chainConfig.contracts.l2ToL1MessagePasser.address;

/** Where a withdrawal stands; while in the challenge period, the seconds left by the L1's clock. */
export interface WithdrawalState {
  status: GetWithdrawalStatusReturnType;
  secondsLeft?: number;
}

/**
 * A withdrawal's state, read as the portal sees it. Shared by the Bridge page (which offers the next step)
 * and the explorer (which shows where any withdrawal stands).
 */
export async function readWithdrawalStatus(
  wagmiConfig: Config,
  settings: AppSettings,
  { receipt, withdrawal }: { receipt: TransactionReceipt; withdrawal: Withdrawal },
): Promise<WithdrawalState> {
  const { l1 } = opPublicClients(wagmiConfig, settings);
  const targetChain = opTargetChain(settings);
  const current = await l1.getWithdrawalStatus({ receipt, targetChain });
  if (current !== "waiting-to-finalize" && current !== "ready-to-finalize") return { status: current };
  // viem times the challenge period by this computer's clock; the portal times it by L1 blocks.
  const secondsLeft = await challengeSecondsLeft(l1, targetChain, settings.chains.l1.id, withdrawal.withdrawalHash);
  return secondsLeft > 0 ? { status: "waiting-to-finalize", secondsLeft } : { status: "ready-to-finalize" };
}

/**
 * Seconds until the portal accepts the finalization of a proved withdrawal, by the L1 chain's own clock
 * (its latest block), as the portal checks it: it finalizes once `block.timestamp - provenAt` exceeds
 * the output oracle's `FINALIZATION_PERIOD_SECONDS`. A test network's clock can differ from the
 * computer's (a devnet's time is moved forward), so the wall clock is not used.
 */
async function challengeSecondsLeft(
  l1: PublicClient,
  targetChain: OpTargetChain,
  l1ChainId: number,
  withdrawalHash: Hash,
): Promise<number> {
  const [[, provenAt], period, block] = await Promise.all([
    l1.readContract({
      address: targetChain.contracts.portal[l1ChainId].address,
      abi: optimismPortalAbi,
      functionName: "provenWithdrawals",
      args: [withdrawalHash],
    }),
    l1.readContract({
      address: targetChain.contracts.l2OutputOracle[l1ChainId].address,
      abi: l2OutputOracleAbi,
      functionName: "FINALIZATION_PERIOD_SECONDS",
    }),
    l1.getBlock({ blockTag: "latest" }),
  ]);
  return Number(provenAt + period + 1n - block.timestamp);
}

/**
 * The bridge sends its message right after emitting `WithdrawalInitiated`, so this withdrawal's message
 * is the first `MessagePassed` log after that event. Returns the receipt with only that log, and the
 * withdrawal it describes.
 */
export function narrowToWithdrawal(receipt: TransactionReceipt, eventLogIndex: number) {
  const passed = extractWithdrawalMessageLogs({ logs: receipt.logs }).find(
    (log) => log.logIndex > eventLogIndex && log.address.toLowerCase() === MESSAGE_PASSER.toLowerCase(),
  );
  if (passed === undefined) throw new Error(`Transaction ${receipt.transactionHash} holds no withdrawal message after the bridge event.`);
  const logs = receipt.logs.filter((log) => log.logIndex === passed.logIndex);
  const [withdrawal] = getWithdrawals({ logs });
  return { receipt: { ...receipt, logs }, withdrawal: withdrawal };
}
