import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { deployOnDevnet } from "./local-stack.ts";
import { subscribeNewHeads } from "./op/new-heads.ts";
import { startOpDevnet, type OpDevnet, type OpDevnetOptions } from "./op-devnet.ts";

/**
 * anvil's log filter for a traced devnet: `node` names each transaction it takes in (with its sender) and
 * mines; the pool (`txpool`) each one it adds, whether as ready or as waiting for an earlier nonce, promotes,
 * prunes or removes; the block builder (`backend`) each one it skips because the block's gas is used up, and
 * each one it drops as invalid.
 */
export const ANVIL_TRACE_FILTER = "trace";
/**
 * The anvil lines a trace keeps: the pool's (`txpool: [hash] ready=false`, removals, prunes), the block
 * builder's skips and drops, and each transaction mined with its block; not the requests' own tracing.
 */
const KEPT_ANVIL_LINE = /txpool: |backend: Skipping|skipping transaction|Transaction: 0x|Block Number:|Added transaction/;

/**
 * A devnet trace written to `file` (one writer): every kept anvil line of both chains and every submission
 * through the fronts, with the time. What the shared test devnets write when AVN_DEVNET_TRACE_DIR is set.
 */
export function devnetTraceToFile(file: string): { trace: NonNullable<OpDevnetOptions["trace"]>; close(): Promise<void> } {
  const out = createWriteStream(file);
  const write = (chain: string, hop: string, text: string) => out.write(`${new Date().toISOString()} ${chain} ${hop} ${text}\n`);
  return {
    trace: {
      anvilLogFilter: ANVIL_TRACE_FILTER,
      onAnvilLine: (chain, line) => {
        if (KEPT_ANVIL_LINE.test(line)) write(chain, "anvil", line.trim());
      },
      onSubmission: (chain, record) => {
        for (const transaction of record.transactions) {
          write(
            chain,
            "front",
            `from ${transaction.from} nonce ${transaction.nonce} gas ${transaction.gasLimit} signed by ${transaction.signedBy} ${transaction.hash}: arrived ${new Date(record.arrivedAt).toISOString()}, anvil answered ${record.status} ${record.answer.slice(0, 300)}`,
          );
        }
      },
    },
    close: () => new Promise((resolve) => out.end(resolve)),
  };
}

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
  /**
   * The transactions anvil's block builder found invalid ("Skipping invalid tx") and never mined, on either
   * chain, each with its line. (anvil also says so of a transaction it mined a moment before, when a block is
   * built from a snapshot of the pool taken before the last one was: those were mined, and are not counted.)
   */
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
  const invalid = new Map<string, string>();
  const mined = new Set<string>();
  /** The hashes of the deployer's transactions, as the front and the blocks named them. */
  const deployerHashes = new Set<string>();
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
        const hash = /0x[0-9a-f]{64}/i.exec(line)?.[0].toLowerCase();
        if (hash === undefined) return;
        if (/Skipping invalid tx/.test(line)) invalid.set(hash, `${chain}: ${line.trim()}`);
        if (/Transaction: 0x/.test(line)) mined.add(hash);
      },
      onSubmission: (chain, record) => {
        for (const transaction of record.transactions) {
          if (transaction.from?.toLowerCase() !== deployer) continue;
          deployerHashes.add(transaction.hash.toLowerCase());
          const answer = record.answer.length > 200 ? `${record.answer.slice(0, 200)}…` : record.answer;
          note(
            "front",
            chain,
            `nonce ${transaction.nonce} gas ${transaction.gasLimit} signed by ${transaction.signedBy} ${transaction.hash}: anvil answered ${record.status} ${answer}`,
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
  const dropped = [...invalid].filter(([hash]) => !mined.has(hash)).map(([, line]) => line);
  if (error !== undefined || dropped.length > 0) {
    for (const line of dropped) options.log(`dropped, never mined: ${line}`);
    options.log(`--- timeline of the deployer ${deployer} (ms after the deployment began) ---`);
    // anvil's lines about the deployer's transactions, and the blocks; the other hops' lines are the deployer's.
    const relevant = (event: TraceEvent) =>
      event.hop !== "anvil" ||
      /Block Number:/.test(event.text) ||
      [...(event.text.toLowerCase().match(/0x[0-9a-f]{64}/g) ?? [])].some((hash) => deployerHashes.has(hash));
    for (const event of events.filter(relevant).sort((a, b) => a.ms - b.ms)) {
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
