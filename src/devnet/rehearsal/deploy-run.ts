import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import type { JsonRpcProvider } from "ethers";

import { runOperatorCommand, succeeded } from "./operator-command.ts";
import type { DeployRun } from "./report.ts";

// One of the live deploy scripts run as an operator would, killed after its first transaction and resumed,
// and what Ignition's journal and the chain say of it afterwards.

interface JournalSend {
  futureId: string;
  networkInteractionId: number;
  nonce: number;
  transaction: { hash: string };
}

async function journalSends(root: string, chainId: number): Promise<JournalSend[]> {
  const journal = await readFile(path.join(root, "deploy", "deployments", `chain-${chainId}`, "journal.jsonl"), "utf8").catch(() => "");
  return journal
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { type: string } & JournalSend)
    .filter((entry) => entry.type === "TRANSACTION_SEND");
}

export async function interruptedDeploy(
  root: string,
  script: string,
  env: Record<string, string>,
  provider: JsonRpcProvider,
  deployer: string,
  chainId: number,
): Promise<DeployRun> {
  const startBlock = await provider.getBlockNumber();
  const nonceBefore = await provider.getTransactionCount(deployer, "latest");
  // Killed once its first transaction is mined and recorded in Ignition's journal: the interruption that
  // Ignition promises to resume from by itself.
  const killed = await runOperatorCommand(root, ["run", script], env, {
    interruptWhen: async () => {
      const first = (await journalSends(root, chainId)).find((send) => send.nonce === nonceBefore);
      return first !== undefined && (await provider.getTransactionReceipt(first.transaction.hash)) !== null;
    },
  });
  const minedWhenKilled = (await provider.getTransactionCount(deployer, "latest")) - nonceBefore;
  const firstSend = (await journalSends(root, chainId)).find((send) => send.nonce === nonceBefore);
  const firstContract =
    firstSend === undefined
      ? undefined
      : ((await provider.getTransactionReceipt(firstSend.transaction.hash))?.contractAddress ?? undefined);
  let resumed = await runOperatorCommand(root, ["run", script], env);
  // A resume that stops on what the kill left half done is recovered as the operator would, with Ignition's
  // own commands, then run again: at most a few times (each recovery settles one future).
  let trackedTransaction: string | undefined;
  const wipedFutures: string[] = [];
  for (let recoveries = 0; resumed.exitCode !== 0 && recoveries < MAX_RECOVERIES; recoveries += 1) {
    const recovery = resumeRecovery(resumed.output);
    if (recovery === undefined) break;
    let ignitionArgs: string[];
    const sent =
      recovery.kind === "track-tx" ? await transactionWithNonce(provider, recovery.sender, recovery.nonce, startBlock + 1) : undefined;
    if (recovery.kind === "track-tx" && sent !== undefined) {
      trackedTransaction = sent;
      ignitionArgs = ["track-tx", sent, `chain-${chainId}`];
    } else if (recovery.kind === "track-tx") {
      // Killed after Ignition recorded the nonce but before the transaction left: the chain has none with it
      // (mined or pending), so nothing of the future was sent, and wiping it lets the resume send it.
      wipedFutures.push(recovery.futureId);
      ignitionArgs = ["wipe", `chain-${chainId}`, recovery.futureId];
    } else {
      wipedFutures.push(recovery.futureId);
      ignitionArgs = ["wipe", `chain-${chainId}`, recovery.futureId];
    }
    succeeded(await runOperatorCommand(root, ["exec", "--", "hardhat", "ignition", ...ignitionArgs, "--network", networkOf(script)], env));
    resumed = await runOperatorCommand(root, ["run", script], env);
  }
  succeeded(resumed);
  await writeFile(path.join(root, `${script.replace(":", "-")}.log`), `${killed.output}\n--- resumed ---\n${resumed.output}`);
  const endBlock = await provider.getBlockNumber();
  const addresses = JSON.parse(
    await readFile(path.join(root, "deploy", "deployments", `chain-${chainId}`, "deployed_addresses.json"), "utf8"),
  ) as Record<string, string>;
  const sends = await journalSends(root, chainId);
  const noncesByInteraction = new Map<string, Set<number>>();
  for (const send of sends) {
    const key = `${send.futureId}/${send.networkInteractionId}`;
    noncesByInteraction.set(key, (noncesByInteraction.get(key) ?? new Set()).add(send.nonce));
  }
  return {
    script,
    chainId,
    interruptedAfterTransactions: minedWhenKilled,
    trackedTransaction,
    wipedFutures,
    interrupted: killed.interrupted,
    resumedExitCode: resumed.exitCode,
    futuresSentTwice: [...noncesByInteraction].filter(([, nonces]) => nonces.size > 1).map(([key]) => key),
    firstContractKept: firstContract === undefined || Object.values(addresses).some((a) => a.toLowerCase() === firstContract.toLowerCase()),
    deployerTransactions: (await provider.getTransactionCount(deployer, "latest")) - nonceBefore,
    journalTransactions: new Set(sends.map((send) => send.nonce)).size,
    gasUsed: await gasUsedBy(provider, deployer, startBlock + 1, endBlock),
    addresses,
    durationMs: killed.durationMs + resumed.durationMs,
  };
}

const networkOf = (script: string) => script.replace(/^deploy:/, "");

const MAX_RECOVERIES = 3;

/** What an operator runs before resuming a deploy script whose resume stopped with `output`, if anything. */
export type ResumeRecovery = { kind: "track-tx"; futureId: string; nonce: number; sender: string } | { kind: "wipe"; futureId: string };

/**
 * The recovery a failed resume names, or undefined for any other failure. Two ways a kill leaves Ignition's
 * journal half done, each with its command:
 * - killed after Ignition recorded a transaction's nonce: HHE10410 names the future and the nonce. If the node
 *   took the transaction, `ignition track-tx` adds it; if the chain has none with that nonce (the kill came
 *   before it left), `ignition wipe` clears the future, whose call the resume then sends;
 * - killed after Ignition started a future but before it recorded the transaction it was about to send:
 *   ignition-core 3.1 stops on an invariant (HHE10000, "Unable to find network interaction for <future>"),
 *   and `ignition wipe` clears that future (nothing of it reached the chain), which the resume then runs.
 */
export function resumeRecovery(output: string): ResumeRecovery | undefined {
  const untracked =
    /send a transaction for future (\S+?)\.?\s[\s\S]*?transaction with nonce (\d+) sent from account (0x[0-9a-fA-F]{40})/.exec(output);
  if (untracked !== null) return { kind: "track-tx", futureId: untracked[1], nonce: Number(untracked[2]), sender: untracked[3] };
  const unstarted = /Unable to find network interaction for (\S+) when trying to get pending onchain interaction/.exec(output);
  if (unstarted !== null) return { kind: "wipe", futureId: unstarted[1] };
  return undefined;
}

/**
 * The hash of `sender`'s transaction with `nonce`, looked up block by block (what an operator does on an
 * explorer), or undefined when the chain has none: the nonce unused, mined or pending.
 */
async function transactionWithNonce(
  provider: JsonRpcProvider,
  sender: string,
  nonce: number,
  fromBlock: number,
): Promise<string | undefined> {
  if ((await provider.getTransactionCount(sender, "pending")) <= nonce) return undefined;
  const head = await provider.getBlockNumber();
  for (let number = fromBlock; number <= head; number += 1) {
    const block = await provider.getBlock(number, true);
    const found = block?.prefetchedTransactions.find((tx) => tx.from.toLowerCase() === sender.toLowerCase() && tx.nonce === nonce);
    if (found !== undefined) return found.hash;
  }
  throw new Error(`no transaction with nonce ${nonce} from ${sender} since block ${fromBlock}`);
}

async function gasUsedBy(provider: JsonRpcProvider, sender: string, fromBlock: number, toBlock: number): Promise<bigint> {
  let total = 0n;
  for (let number = fromBlock; number <= toBlock; number += 1) {
    const block = await provider.getBlock(number, true);
    for (const transaction of block?.prefetchedTransactions ?? []) {
      if (transaction.from.toLowerCase() !== sender.toLowerCase()) continue;
      total += (await provider.getTransactionReceipt(transaction.hash))?.gasUsed ?? 0n;
    }
  }
  return total;
}
