import { NonceManager, Wallet } from "ethers";

import { VerificationRegistry__factory } from "../../typechain-types/index.ts";
import { solanaBytes32 } from "../devnet/demo-verify.ts";
import { eventArgs } from "../devnet/events.ts";
import { withBenchNetwork } from "./bench-network.ts";
import { summarize, type TimingSummary } from "./bridge-timing.ts";
import { JobStatus } from "@avn/protocol/constants";

/** Explicit: an estimate made before a finalization in the same block (which frees collateral slots) can fall short. */
const REQUEST_GAS_LIMIT = 400_000n;

export interface NodeBenchResult {
  jobs: number;
  timings: TimingSummary[];
  finalizedPerMinute: number;
  nodeGasPerJob: number;
  requestGasPerJob: number;
  submissionTransactions: number;
}

/**
 * On a fresh devnet with the verification network of `npm start` (three circuit nodes, quorum 2, L2
 * blocks every 2 s, nodes polling every second and woken by the L2 WebSocket), opens `jobs` jobs, one
 * every `intervalMs`, alternating EVM and Solana demo holdings, and measures request → finalization,
 * finalized jobs per minute, and the gas the nodes spent per finalized job.
 */
export async function measureNodeThroughput(options: { jobs: number; intervalMs: number; projectRoot: string }): Promise<NodeBenchResult> {
  return withBenchNetwork(
    { name: "node", projectRoot: options.projectRoot, onProgress: (line) => console.log(line) },
    async ({ l2, contracts, network }) => {
      const consumer = new NonceManager(new Wallet(network.stack.accounts!.consumer.privateKey, l2));
      const registry = VerificationRegistry__factory.connect(contracts.VerificationRegistry, consumer);
      const [evm] = network.stack.demo!.evm;
      const [svm] = network.stack.demo!.svm;
      const firstBlock = (await l2.getBlockNumber()) + 1;

      console.log(`Opening ${options.jobs} jobs, one every ${options.intervalMs} ms…`);
      const requestedAt = new Map<bigint, number>();
      const finalizedAt = new Map<bigint, number>();
      let requestGas = 0n;
      const requests: Array<Promise<void>> = [];
      // Finalizations are watched from the start, while jobs are still being opened.
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          for (const jobId of requestedAt.keys()) {
            if (!finalizedAt.has(jobId) && (await registry.getJob(jobId)).status === JobStatus.finalized)
              finalizedAt.set(jobId, performance.now());
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      for (let index = 0; index < options.jobs; index += 1) {
        const sentAt = performance.now();
        // Sent on the interval's clock, not after the previous send's answer: an RPC answers a submission
        // only after a network round trip (the devnet's front too), and the pace is what is measured.
        const sending =
          index % 2 === 0
            ? registry.requestEvmBalance(evm.user_address, evm.contract_address, { gasLimit: REQUEST_GAS_LIMIT })
            : registry.requestSvmBalance(solanaBytes32(svm.owner_address), solanaBytes32(svm.token_mint_address), {
                gasLimit: REQUEST_GAS_LIMIT,
              });
        requests.push(
          sending.then(async (tx) => {
            const receipt = await tx.wait();
            requestGas += receipt!.gasUsed;
            requestedAt.set(eventArgs(receipt, "VerificationRequested").jobId as bigint, sentAt);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
      }
      await Promise.all(requests);
      const deadline = Date.now() + 120_000;
      while (finalizedAt.size < requestedAt.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      watching = false;
      await watcher;
      if (finalizedAt.size < requestedAt.size)
        throw new Error(`${requestedAt.size - finalizedAt.size} jobs did not finalize within two minutes`);

      // Gas of every node transaction to the registry (votes, including those that came too late to count).
      const burners = new Set(network.stack.nodes!.map((node) => node.burner.toLowerCase()));
      let nodeGas = 0n;
      let submissions = 0;
      for (let block = firstBlock; block <= (await l2.getBlockNumber()); block += 1) {
        for (const tx of (await l2.getBlock(block, true))!.prefetchedTransactions) {
          if (!burners.has(tx.from.toLowerCase()) || tx.to?.toLowerCase() !== contracts.VerificationRegistry.toLowerCase()) continue;
          nodeGas += (await l2.getTransactionReceipt(tx.hash))!.gasUsed;
          submissions += 1;
        }
      }
      const latencies = [...requestedAt].map(([jobId, at]) => finalizedAt.get(jobId)! - at);
      const first = Math.min(...requestedAt.values());
      const last = Math.max(...finalizedAt.values());
      return {
        jobs: options.jobs,
        timings: [summarize("request sent → job finalized", latencies)],
        finalizedPerMinute: (finalizedAt.size * 60_000) / (last - first),
        nodeGasPerJob: Number(nodeGas) / finalizedAt.size,
        requestGasPerJob: Number(requestGas) / options.jobs,
        submissionTransactions: submissions,
      };
    },
  );
}
