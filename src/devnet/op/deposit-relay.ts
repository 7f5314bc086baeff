import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";

import type { JsonRpcProvider } from "ethers";

import { BackgroundService, type BackgroundServiceOptions } from "./background-service.ts";
import {
  depositFromLog,
  depositHash,
  serializeDeposit,
  TRANSACTION_DEPOSITED_TOPIC,
  type DepositTransaction,
} from "./deposit-transaction.ts";

export interface DepositRelayOptions extends BackgroundServiceOptions {
  l1: JsonRpcProvider;
  l2: JsonRpcProvider;
  /** The OptimismPortal proxy on L1. */
  portal: string;
  /** The first L1 block to scan (the portal's deployment block). */
  fromBlock: number;
  /** Where the relay keeps its state (next L1 block to scan, failed deposits), so that a restart resumes there. */
  cursorFile: string;
  /** Longest L1 block range asked of `eth_getLogs` at once. */
  maxBlockRange?: number;
  /** How long to wait for a relayed deposit to be mined on L2. */
  inclusionTimeoutMs?: number;
  /**
   * The L1 attributes updater (`l1-attributes.ts`): before a deposit is sent, its L1 block's values are
   * made to reach L1Block first. Without it, deposits are relayed without regard to L1Block.
   */
  l1Attributes?: { submitUpTo(l1BlockNumber: number): Promise<void> };
}

/** What the relay persists. `anchor` ties it to one L1 chain: the hash of block `nextBlock - 1`. */
interface RelayState {
  portal: string;
  nextBlock: number;
  anchor: string | null;
  /** Source hashes of deposits op-geth would include as failed transactions (see `#relayFailed`). */
  failed: string[];
}

/**
 * The devnet's stand-in for op-node's deposit derivation: every `TransactionDeposited` event of the
 * portal becomes the matching deposit transaction on the anvil L2, in L1 order, exactly once.
 *
 * Exactly once, also across restarts and crashes: a deposit's L2 hash is known before it is sent, so
 * each one is looked up on L2 first and sent only if L2 has never seen it; passes never overlap; the
 * state (next L1 block to scan) is persisted only after every deposit up to it is mined, so a crash
 * re-scans at worst a range whose deposits the lookup then skips. A state file from another L1 chain
 * (its anchor block hash differs) is ignored. In order: deposits are sent one at a time, each after the
 * previous one is mined, and, given `l1Attributes`, each after its L1 block's attributes.
 */
export class DepositRelay extends BackgroundService<number> {
  readonly #options: Required<Omit<DepositRelayOptions, keyof BackgroundServiceOptions | "l1Attributes">> &
    Pick<DepositRelayOptions, "l1Attributes">;
  #state: RelayState | undefined;
  #relayed = 0;
  #skipped = 0;
  #failed = 0;

  constructor(options: DepositRelayOptions) {
    super(options);
    this.#options = { maxBlockRange: 1_000, inclusionTimeoutMs: 30_000, ...options };
  }

  /** Deposits this instance sent to L2. */
  get relayedCount(): number {
    return this.#relayed;
  }

  /** Deposits this instance found already handled (re-scanned after a restart) and did not send again. */
  get skippedCount(): number {
    return this.#skipped;
  }

  /** Deposits that fail on L2 as op-geth would fail them: mint credited, nothing else executed. */
  get failedCount(): number {
    return this.#failed;
  }

  /**
   * One pass: relays every deposit emitted up to the latest L1 block and returns how many it sent. A
   * call while a pass runs joins that pass.
   */
  relayPending(): Promise<number> {
    return this.runPass();
  }

  protected async pass(isStopping: () => boolean): Promise<number> {
    const { l1, portal, maxBlockRange } = this.#options;
    const state = (this.#state ??= await this.#loadState());
    const latest = await l1.getBlockNumber();
    let sent = 0;
    while (state.nextBlock <= latest && !isStopping()) {
      const toBlock = Math.min(latest, state.nextBlock + maxBlockRange - 1);
      const logs = await l1.getLogs({ address: portal, topics: [TRANSACTION_DEPOSITED_TOPIC], fromBlock: state.nextBlock, toBlock });
      logs.sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
      for (const log of logs) {
        if (await this.#relay(depositFromLog(log), state)) sent += 1;
      }
      const anchor = await l1.getBlock(toBlock);
      if (anchor === null) throw new Error(`L1 block ${toBlock} disappeared while relaying`);
      state.nextBlock = toBlock + 1;
      state.anchor = anchor.hash;
      await this.#saveState(state);
    }
    return sent;
  }

  /** Relays one deposit unless L2 has it already; true when it was sent now. */
  async #relay(deposit: DepositTransaction, state: RelayState): Promise<boolean> {
    const { l2 } = this.#options;
    const hash = depositHash(deposit);
    if (state.failed.includes(deposit.sourceHash) || (await l2.send("eth_getTransactionByHash", [hash])) !== null) {
      this.#skipped += 1;
      return false;
    }
    // op-node derives an L1 block's attributes as the first deposit of the L2 block that starts its
    // epoch, before the block's user deposits: queued on L2 before this deposit is sent, they are mined
    // first (the depositor's call, in the pool, goes before any deposit transaction; see l1-attributes.ts).
    await this.#options.l1Attributes?.submitUpTo(deposit.l1BlockNumber);
    // op-geth credits the mint, then fails a deposit whose value the sender cannot cover; anvil would
    // leave such a transaction pending for ever (or refuse it), stalling every later deposit.
    if (deposit.value > deposit.mint + (await l2.getBalance(deposit.from))) {
      await this.#relayFailed(deposit, state);
      return false;
    }
    await l2.send("eth_sendRawTransaction", [serializeDeposit(deposit)]);
    const receipt = await l2.waitForTransaction(hash, 1, this.#options.inclusionTimeoutMs);
    if (receipt === null) throw new Error(`deposit ${hash} was not mined on L2`);
    this.#relayed += 1;
    return true;
  }

  /**
   * A deposit whose value exceeds its mint plus the sender's L2 balance is valid by the OP spec: op-geth
   * includes it as a failed transaction that still credits the mint. anvil does not include such a
   * transaction, which would block every later deposit; the relay makes op-geth's state change (credit
   * the mint) and records the deposit so that it is never applied twice.
   */
  async #relayFailed(deposit: DepositTransaction, state: RelayState): Promise<void> {
    const { l2 } = this.#options;
    if (deposit.mint > 0n) {
      const balance = await l2.getBalance(deposit.from);
      await l2.send("anvil_setBalance", [deposit.from, `0x${(balance + deposit.mint).toString(16)}`]);
    }
    state.failed.push(deposit.sourceHash);
    await this.#saveState(state);
    this.#failed += 1;
  }

  async #loadState(): Promise<RelayState> {
    const fresh: RelayState = { portal: this.#options.portal, nextBlock: this.#options.fromBlock, anchor: null, failed: [] };
    let saved: RelayState;
    try {
      saved = JSON.parse(await readFile(this.#options.cursorFile, "utf8")) as RelayState;
    } catch {
      // No state (first start) or an unreadable one: scanning from the start is safe, only slower,
      // because deposits already on L2 are recognised by their hash and skipped.
      return fresh;
    }
    const sameChain =
      typeof saved.portal === "string" &&
      saved.portal.toLowerCase() === this.#options.portal.toLowerCase() &&
      Number.isSafeInteger(saved.nextBlock) &&
      Array.isArray(saved.failed) &&
      (saved.anchor === null || (await this.#options.l1.getBlock(saved.nextBlock - 1))?.hash === saved.anchor);
    // State of an earlier devnet (the same deployer gives the same portal address, so the anchor block
    // hash decides): this chain starts from its beginning.
    return sameChain ? saved : fresh;
  }

  async #saveState(state: RelayState): Promise<void> {
    const file = this.#options.cursorFile;
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temporary, JSON.stringify(state));
    await rename(temporary, file); // atomic: a crash leaves the old state or the new one
  }
}
