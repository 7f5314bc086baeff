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
  // Killed after the node took a transaction but before Ignition recorded it, the resume stops with
  // HHE10410 and names the nonce; the operator's recovery is `hardhat ignition track-tx`, then a resume.
  const untracked = /transaction with nonce (\d+) sent from account (0x[0-9a-fA-F]{40})/.exec(resumed.output);
  let trackedTransaction: string | undefined;
  if (resumed.exitCode !== 0 && untracked !== null) {
    trackedTransaction = await transactionWithNonce(provider, untracked[2], Number(untracked[1]), startBlock + 1);
    succeeded(
      await runOperatorCommand(
        root,
        ["exec", "--", "hardhat", "ignition", "track-tx", trackedTransaction, `chain-${chainId}`, "--network", networkOf(script)],
        env,
      ),
    );
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

/** The hash of `sender`'s transaction with `nonce`, looked up block by block (what an operator does on an explorer). */
async function transactionWithNonce(provider: JsonRpcProvider, sender: string, nonce: number, fromBlock: number): Promise<string> {
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
