import { address, getAddressEncoder } from "@solana/kit";
import { hexlify, NonceManager, Wallet, type Provider } from "ethers";

import { GameItem__factory, VerificationRegistry__factory } from "../../typechain-types/index.ts";
import { queryResultHash } from "../common/query-result.ts";
import { eventArgs } from "./events.ts";
import type { StackFile } from "../common/stack-file.ts";
import { JobStatus } from "@avn/protocol/constants";

/**
 * Explicit gas for job requests: an estimate is made against the latest block, and a finalization mined
 * before the request (freeing a collateral slot, say) can make the request dearer than estimated.
 */
const REQUEST_GAS_LIMIT = 400_000n;

export interface OnChainVerification {
  jobId: bigint;
  /** What the registry stored once a quorum of nodes agreed: the balance and the QueryResult's hash. */
  onChain: { balance: bigint; queryResultHash: string; sourceBlock: bigint };
  /** The API's answer to the same query, with the hash of its QueryResult. */
  api: { balance: bigint; queryResult: string; queryResultHash: string };
  /** From the request transaction's send to the finalized result being read. */
  ms: number;
  /** Gas of the consumer's request, and of the node transactions that carried the job's votes. */
  gas: { request: bigint; nodes: bigint };
}

/** A balance query of the demo; `token_id` makes an EVM one an ERC-1155 balance (not for jobs). */
export type DemoQuery =
  | { chain: "evm"; user_address: string; contract_address: string; token_id?: string }
  | { chain: "svm"; owner_address: string; token_mint_address: string };

/**
 * Opens an on-chain verification job as the stack's consumer, waits for the circuit nodes to finalize it,
 * and asks the API the same question: what `npm run demo:verify` prints and the end-to-end tests assert.
 */
export async function verifyOnChainAndByApi(
  stack: StackFile,
  l2: Provider,
  query: DemoQuery,
  timeoutMs = 60_000,
): Promise<OnChainVerification> {
  const consumer = new NonceManager(new Wallet(stack.accounts!.consumer.privateKey, l2));
  const registry = VerificationRegistry__factory.connect(stack.contracts!.l2!.VerificationRegistry, consumer);
  const started = performance.now();
  const tx =
    query.chain === "evm"
      ? await registry.requestEvmBalance(query.user_address, query.contract_address, { gasLimit: REQUEST_GAS_LIMIT })
      : await registry.requestSvmBalance(solanaBytes32(query.owner_address), solanaBytes32(query.token_mint_address), {
          gasLimit: REQUEST_GAS_LIMIT,
        });
  const receipt = await tx.wait();
  const jobId = eventArgs(receipt, "VerificationRequested").jobId as bigint;
  const onChain = await waitForResult(registry, jobId, timeoutMs);
  const ms = performance.now() - started;
  return {
    jobId,
    onChain,
    api: await askApi(stack, query),
    ms,
    gas: { request: receipt!.gasUsed, nodes: await nodeGasOf(registry, jobId, receipt!.blockNumber) },
  };
}

/** The gas of the transactions that carried votes on `jobId` (a node's batch may carry other jobs too). */
async function nodeGasOf(
  registry: ReturnType<typeof VerificationRegistry__factory.connect>,
  jobId: bigint,
  fromBlock: number,
): Promise<bigint> {
  const votes = await registry.queryFilter(registry.filters.VoteSubmitted(jobId), fromBlock);
  const hashes = [...new Set(votes.map((vote) => vote.transactionHash))];
  const receipts = await Promise.all(hashes.map((hash) => registry.runner!.provider!.getTransactionReceipt(hash)));
  return receipts.reduce((sum, receipt) => sum + receipt!.gasUsed, 0n);
}

/** The example game: the demo holder asks for verification, the nodes answer, the holder claims its item. */
export async function claimGameItem(
  stack: StackFile,
  l2: Provider,
  timeoutMs = 60_000,
): Promise<{ jobId: bigint; tokenId: bigint; verifiedBalance: bigint }> {
  const player = new NonceManager(new Wallet(stack.accounts!.demoHolder.privateKey, l2));
  const game = GameItem__factory.connect(stack.contracts!.l2!.GameItem, player);
  await (await game.requestVerification({ gasLimit: REQUEST_GAS_LIMIT })).wait();
  const jobId = await game.jobOf(await player.getAddress());
  const registry = VerificationRegistry__factory.connect(stack.contracts!.l2!.VerificationRegistry, l2);
  await waitForResult(registry, jobId, timeoutMs);
  const claimed = eventArgs(await (await game.claim()).wait(), "ItemClaimed");
  return { jobId, tokenId: claimed.tokenId as bigint, verifiedBalance: claimed.verifiedBalance as bigint };
}

export function solanaBytes32(base58: string): string {
  return hexlify(Uint8Array.from(getAddressEncoder().encode(address(base58))));
}

async function waitForResult(registry: ReturnType<typeof VerificationRegistry__factory.connect>, jobId: bigint, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, balance, queryResultHash, sourceBlock } = await registry.getResult(jobId);
    if (status === JobStatus.finalized) return { balance, queryResultHash, sourceBlock };
    if (status !== 1n) throw new Error(`job ${jobId} ended with status ${status} (expired?)`);
    if (Date.now() > deadline) throw new Error(`job ${jobId} was not finalized within ${timeoutMs} ms: are the circuit nodes running?`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Posts `query` to the stack's API with its demo key (`search`: a query string such as `?attest=true`); the answer's text, which must be a 200. */
export async function postToApi(stack: StackFile, query: DemoQuery, search = ""): Promise<string> {
  const { chain, ...body } = query;
  const response = await fetch(`${stack.api!.baseUrl}/api/ccq-${chain}${search}`, {
    method: "POST",
    headers: { authorization: stack.api!.apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`the API answered ${response.status}: ${text}`);
  return text;
}

async function askApi(stack: StackFile, query: DemoQuery): Promise<OnChainVerification["api"]> {
  const text = await postToApi(stack, query);
  // The balance may exceed 2^53: read it from the raw text, not through JSON.parse's doubles.
  const balance = BigInt(/"balance":(\d+)/.exec(text)![1]);
  const queryResult = (JSON.parse(text) as { data: { asset: { QueryResult: string } } }).data.asset.QueryResult;
  return { balance, queryResult, queryResultHash: queryResultHash(queryResult) };
}
