import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { deployOnDevnet } from "./local-stack.ts";
import { subscribeNewHeads } from "./op/new-heads.ts";
import { startOpDevnet, type OpDevnet } from "./op-devnet.ts";

/**
 * anvil's log filter for a traced devnet: `node` names each transaction it takes in and mines; the block
 * builder (`backend`) names at trace level each transaction it skips because the block's gas is used up,
 * and at warn level each one it drops as invalid.
 */
const ANVIL_TRACE_FILTER = "node=info,backend=trace";
/** The anvil lines a trace keeps: a transaction taken in or mined, skipped, or dropped. */
const KEPT_ANVIL_LINE = /skipping|invalid|Transaction: 0x|Block Number:/i;

export interface DeployTraceOptions {
  /** Deployments to run, each on a devnet of its own. */
  runs: number;
  /** Seconds per L2 block (the shared test devnet's is 1). */
  l2BlockTime: number;
  /** Deploy code above 24 KiB (what `--coverage`'s instrumented contracts need). */
  disableCodeSizeLimit: boolean;
  /** Where the project's Ignition journals go (`deploy/deployments/<id>`, removed after each run). */
  projectRoot: string;
  log: (line: string) => void;
}

/** One event of a run, at `ms` after its deployment began: which hop saw what. */
interface TraceEvent {
  ms: number;
  hop: "front" | "anvil" | "pool" | "block";
  chain: "l1" | "l2";
  text: string;
}

export interface DeployRunResult {
  ok: boolean;
  seconds: number;
  error?: string;
  /** The deployer's L2 transactions that anvil's block builder dropped (its "Skipping invalid tx" lines). */
  dropped: string[];
}

/**
 * Runs the devnet's two-chain deployment (`deployOnDevnet`, as the shared test devnet and `npm start` run it)
 * `runs` times, each on a fresh devnet, and follows every transaction of the deployer's key at each hop:
 * what the RPC front took in and what anvil answered it, anvil's own log (taken in, mined, skipped for gas,
 * dropped as invalid), anvil's pool at each new L2 block (`txpool_content`), and each L2 block's
 * transactions from the deployer, deposits included (the relay sends those to anvil directly, not through the
 * front). After a failed run, or when anvil dropped any transaction, the whole timeline is printed.
 */
export async function traceDevnetDeploys(options: DeployTraceOptions): Promise<DeployRunResult[]> {
  const results: DeployRunResult[] = [];
  for (let run = 1; run <= options.runs; run += 1) {
    const result = await traceOneDeploy(options);
    results.push(result);
    const outcome = result.ok ? "deployed" : `FAILED: ${result.error}`;
    options.log(`run ${run}/${options.runs}: ${outcome} in ${result.seconds.toFixed(1)} s; dropped by anvil: ${result.dropped.length}`);
  }
  return results;
}

async function traceOneDeploy(options: DeployTraceOptions): Promise<DeployRunResult> {
  const events: TraceEvent[] = [];
  let began = Date.now();
  const note = (hop: TraceEvent["hop"], chain: TraceEvent["chain"], text: string) =>
    events.push({ ms: Date.now() - began, hop, chain, text });
  const dropped: string[] = [];
  const stateDir = await mkdtemp(path.join(tmpdir(), "devnet-trace-"));
  let deployer = "";
  const devnet: OpDevnet = await startOpDevnet({
    stateDir,
    l2BlockTime: options.l2BlockTime,
    disableCodeSizeLimit: options.disableCodeSizeLimit,
    trace: {
      anvilLogFilter: ANVIL_TRACE_FILTER,
      onAnvilLine: (chain, line) => {
        if (!KEPT_ANVIL_LINE.test(line)) return;
        note("anvil", chain, line.trim());
        if (chain === "l2" && /Skipping invalid tx/.test(line)) dropped.push(line.trim());
      },
      onSubmission: (chain, record) => {
        for (const transaction of record.transactions) {
          if (transaction.from?.toLowerCase() !== deployer) continue;
          const answer = record.answer.length > 200 ? `${record.answer.slice(0, 200)}…` : record.answer;
          note(
            "front",
            chain,
            `nonce ${transaction.nonce} gas ${transaction.gasLimit} ${transaction.hash}: anvil answered ${record.status} ${answer}`,
          );
        }
      },
    },
  });
  deployer = devnet.accounts.deployer.address.toLowerCase();
  const heads = subscribeNewHeads(devnet.l2.node.wsUrl, (blockNumber) => void recordBlock(devnet, deployer, blockNumber, note));
  const suffix = path.basename(stateDir);
  const ids = { l1: `trace-l1-${suffix}`, l2: `trace-l2-${suffix}` };
  began = Date.now();
  let error: string | undefined;
  try {
    await heads.ready;
    await deployOnDevnet(devnet, ids);
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  } finally {
    heads.close();
    await devnet.stop();
    await rm(stateDir, { recursive: true, force: true });
    for (const id of Object.values(ids))
      await rm(path.join(options.projectRoot, "deploy", "deployments", id), { recursive: true, force: true });
  }
  const seconds = (Date.now() - began) / 1000;
  if (error !== undefined || dropped.length > 0) {
    options.log(`--- timeline of the deployer ${deployer} (ms after the deployment began) ---`);
    for (const event of events.sort((a, b) => a.ms - b.ms)) {
      options.log(`${String(event.ms).padStart(7)}  ${event.chain} ${event.hop.padEnd(5)}  ${event.text}`);
    }
  }
  return { ok: error === undefined, seconds, error, dropped };
}

interface PoolContent {
  pending: Record<string, Record<string, { hash: string }>>;
  queued: Record<string, Record<string, { hash: string }>>;
}

/** Records one L2 block's transactions from `deployer` and what anvil's pool still holds of it. */
async function recordBlock(
  devnet: OpDevnet,
  deployer: string,
  blockNumber: number,
  note: (hop: TraceEvent["hop"], chain: TraceEvent["chain"], text: string) => void,
): Promise<void> {
  const l2 = devnet.l2Provider;
  try {
    const [block, pool] = await Promise.all([
      l2.send("eth_getBlockByNumber", [`0x${blockNumber.toString(16)}`, true]) as Promise<{
        gasUsed: string;
        gasLimit: string;
        transactions: Array<{ from: string; nonce: string; hash: string; type: string; gas: string }>;
      }>,
      l2.send("txpool_content", []) as Promise<PoolContent>,
    ]);
    const mine = block.transactions.filter((transaction) => transaction.from.toLowerCase() === deployer);
    const listed = mine.map((transaction) => `nonce ${Number(transaction.nonce)} type ${transaction.type} ${transaction.hash}`);
    note(
      "block",
      "l2",
      `#${blockNumber} gas used ${BigInt(block.gasUsed)} of ${BigInt(block.gasLimit)}, ${block.transactions.length} transactions; the deployer's: ${listed.join(", ") || "none"}`,
    );
    const held = (section: PoolContent["pending"]) =>
      Object.entries(section)
        .filter(([sender]) => sender.toLowerCase() === deployer)
        .flatMap(([, byNonce]) => Object.entries(byNonce).map(([nonce, transaction]) => `nonce ${nonce} ${transaction.hash}`));
    const pending = held(pool.pending);
    const queued = held(pool.queued);
    if (pending.length + queued.length > 0)
      note("pool", "l2", `after #${blockNumber}: pending [${pending.join(", ")}] queued [${queued.join(", ")}]`);
  } catch (error) {
    note("block", "l2", `#${blockNumber}: could not be read (${error instanceof Error ? error.message : String(error)})`);
  }
}
