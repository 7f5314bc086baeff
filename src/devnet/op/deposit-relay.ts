import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

import type { JsonRpcProvider } from "ethers";

import { PollingLoop } from "../polling-loop.js";

import { depositFromLog, depositHash, serializeDeposit, TRANSACTION_DEPOSITED_TOPIC } from "./deposit-transaction.js";

export interface DepositRelayOptions {
  l1: JsonRpcProvider;
  l2: JsonRpcProvider;
  /** The OptimismPortal proxy on L1. */
  portal: string;
  /** The first L1 block to scan (the portal's deployment block). */
  fromBlock: number;
  /** Where the relay remembers the next L1 block to scan, so that a restart resumes there. */
  cursorFile: string;
  pollIntervalMs?: number;
  /** Longest L1 block range asked of `eth_getLogs` at once. */
  maxBlockRange?: number;
  /** How long to wait for a relayed deposit to be mined on L2. */
  inclusionTimeoutMs?: number;
  onError?: (error: unknown) => void;
}

interface Cursor {
  portal: string;
  nextBlock: number;
}

/**
 * The devnet's stand-in for op-node's deposit derivation: every `TransactionDeposited` event of the
 * portal becomes the matching deposit transaction on the anvil L2, in L1 order, exactly once.
 *
 * Exactly once, also across restarts and crashes: a deposit's L2 hash is known before it is sent, so
 * each one is looked up on L2 first and sent only if L2 has never seen it; the cursor (next L1 block
 * to scan) is persisted only after every deposit up to it is mined, so a crash re-scans at worst a
 * range whose deposits the lookup then skips. In order: deposits are sent one at a time, each after
 * the previous one is mined.
 */
export class DepositRelay {
  readonly #options: Required<Omit<DepositRelayOptions, "onError">> & Pick<DepositRelayOptions, "onError">;
  #nextBlock: number | undefined;
  readonly #loop: PollingLoop;
  #relayed = 0;
  #skipped = 0;

  constructor(options: DepositRelayOptions) {
    this.#options = { pollIntervalMs: 500, maxBlockRange: 1_000, inclusionTimeoutMs: 30_000, ...options };
    this.#loop = new PollingLoop(() => this.relayPending(), this.#options.pollIntervalMs, options.onError);
  }

  /** Deposits this instance sent to L2. */
  get relayedCount(): number {
    return this.#relayed;
  }

  /** Deposits this instance found already on L2 (re-scanned after a restart) and did not send again. */
  get skippedCount(): number {
    return this.#skipped;
  }

  /** Starts relaying in the background until `stop()`. */
  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** One pass: relays every deposit emitted up to the latest L1 block. Returns how many it sent. */
  async relayPending(): Promise<number> {
    const { l1, l2, portal, maxBlockRange } = this.#options;
    this.#nextBlock ??= await this.#loadCursor();
    const latest = await l1.getBlockNumber();
    let sent = 0;
    while (this.#nextBlock <= latest && !this.#loop.stopRequested) {
      const toBlock = Math.min(latest, this.#nextBlock + maxBlockRange - 1);
      const logs = await l1.getLogs({ address: portal, topics: [TRANSACTION_DEPOSITED_TOPIC], fromBlock: this.#nextBlock, toBlock });
      logs.sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
      for (const log of logs) {
        const deposit = depositFromLog(log);
        const hash = depositHash(deposit);
        if ((await l2.send("eth_getTransactionByHash", [hash])) !== null) {
          this.#skipped += 1;
          continue;
        }
        await l2.send("eth_sendRawTransaction", [serializeDeposit(deposit)]);
        const receipt = await l2.waitForTransaction(hash, 1, this.#options.inclusionTimeoutMs);
        if (receipt === null) throw new Error(`deposit ${hash} was not mined on L2`);
        this.#relayed += 1;
        sent += 1;
      }
      this.#nextBlock = toBlock + 1;
      await this.#saveCursor({ portal, nextBlock: this.#nextBlock });
    }
    return sent;
  }


  async #loadCursor(): Promise<number> {
    try {
      const cursor = JSON.parse(await readFile(this.#options.cursorFile, "utf8")) as Cursor;
      // A cursor of another portal belongs to an earlier devnet: start this one from its beginning.
      if (cursor.portal.toLowerCase() === this.#options.portal.toLowerCase() && Number.isSafeInteger(cursor.nextBlock)) {
        return cursor.nextBlock;
      }
    } catch {
      // No cursor (first start) or an unreadable one: scanning from the start is safe, only slower,
      // because deposits already on L2 are recognised by their hash and skipped.
    }
    return this.#options.fromBlock;
  }

  async #saveCursor(cursor: Cursor): Promise<void> {
    const file = this.#options.cursorFile;
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(cursor));
    await rename(temporary, file); // atomic: a crash leaves the old cursor or the new one
  }
}
