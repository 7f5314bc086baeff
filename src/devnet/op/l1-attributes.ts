import { Interface, parseEther, parseUnits, toQuantity, type JsonRpcProvider } from "ethers";

import { opArtifact } from "../../op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { BackgroundService, type BackgroundServiceOptions } from "./background-service.ts";
import { subscribeNewHeads, type HeadSubscription } from "./new-heads.ts";

export interface L1AttributesUpdaterOptions extends BackgroundServiceOptions {
  /** anvil L1, whose blocks are followed. */
  l1: JsonRpcProvider;
  /** anvil L2, whose `L1Block` predeploy is updated. */
  l2: JsonRpcProvider;
  /** The WebSocket URLs of the two anvil nodes, for their `newHeads` subscriptions. */
  l1WsUrl: string;
  l2WsUrl: string;
  /** The SystemConfig proxy on L1: the batcher hash and fee overhead op-node copies into each update. */
  systemConfig: string;
}

/** The arguments of one `L1Block.setL1BlockValues` call (0.17.3, the pre-Ecotone form), in its order. */
export interface L1BlockValues {
  number: bigint;
  timestamp: bigint;
  basefee: bigint;
  hash: string;
  sequenceNumber: bigint;
  batcherHash: string;
  l1FeeOverhead: bigint;
  l1FeeScalar: bigint;
}

// op-node's gas limit for the L1 attributes deposit since Regolith; the call uses some 45,000.
const SET_VALUES_GAS = 1_000_000n;
// Fee cap of the depositor's calls, far above the L2's base fee (1 gwei at most, falling while blocks are
// nearly empty), so a queued call never becomes unminable when the base fee moves. They bid no tip: a
// call pays the base fee only, and anvil still mines it before any deposit transaction (which bids
// nothing at all), the order op-node gives the system deposit.
const MAX_FEE_PER_GAS = parseUnits("100", "gwei");
// The depositor pays for gas on anvil (op-geth's system deposit pays none): it is given this much
// whenever it holds less than a tenth of it, enough for the fee cap of ten thousand queued calls.
const DEPOSITOR_FUNDS = parseEther("1000");
// L1 blocks whose values a pass reads ahead of its sends: a burst of blocks costs one round trip, and a
// backlog of thousands (an updater that was down) does not open thousands of requests at once.
const VALUES_READ_AHEAD = 16;

const l1Block = new Interface(opArtifact("L1Block").abi);
const systemConfig = new Interface(opArtifact("SystemConfig").abi);

/** Decodes the calldata of a `setL1BlockValues` call (for tests and tools reading the L2's history). */
export function decodeSetL1BlockValues(data: string): L1BlockValues {
  const [number, timestamp, basefee, hash, sequenceNumber, batcherHash, l1FeeOverhead, l1FeeScalar] = l1Block.decodeFunctionData(
    "setL1BlockValues",
    data,
  ) as unknown as [bigint, bigint, bigint, string, bigint, string, bigint, bigint];
  return { number, timestamp, basefee, hash, sequenceNumber, batcherHash, l1FeeOverhead, l1FeeScalar };
}

interface Waiter {
  l1BlockNumber: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * The devnet's stand-in for op-node's L1 attributes deposit: after each L1 block, the L2's `L1Block`
 * predeploy (the 0.17.3 contract, installed by `installL2Predeploys`) learns that block's number,
 * timestamp, base fee and hash through `setL1BlockValues`, called by the depositor account
 * (`L1Block.DEPOSITOR_ACCOUNT()`, the only caller it accepts), impersonated on anvil. op-node sends it as
 * a deposit transaction (type 0x7e); anvil's pool holds one deposit transaction per sender at a time (a
 * second is refused as an underpriced replacement), which would set one L1 block per L2 block and never
 * catch up with an L1 that mines a block per transaction. An ordinary call from the impersonated account
 * has a nonce, so any number queue up in order; it pays the L2 base fee (no tip), where op-node's pays none.
 *
 * In order, never skipping a block: each pass reads what L1Block knows at the L2's `pending` state (the
 * calls mined and those queued) and sends one call per later L1 block up to the L1 head, oldest first,
 * without waiting for each to be mined. anvil mines one sender's transactions in nonce order, so a burst
 * of blocks lands in order within the next L2 block; an L2 block makes room for some 600 of them. The
 * chain is the only state, so a restarted updater (or a new process) carries on from `L1Block.number()`.
 * On an L1Block never set (number 0: its storage starts empty), the first pass starts at the L1 head.
 *
 * Event-driven: a `newHeads` subscription on L1 wakes a pass for every L1 block, so each block's values
 * are queued within milliseconds and mined in the next L2 block; the poll interval only retries a failed
 * pass and covers a lost subscription. `caughtUp(n)` follows the L2's `newHeads` to tell when L1Block
 * knows block `n`.
 *
 * Per block, as op-node sets them: number, timestamp, base fee and hash of the L1 block; the batcher hash
 * and the fee overhead as SystemConfig holds them at that block (op-node copies both from its view of
 * SystemConfig). Sequence number 0: the devnet updates L1Block once per L1 block, in the first L2 block
 * that learns of it, the block op-node numbers 0 (it repeats the update in every later L2 block of the
 * epoch with 1, 2, …; the devnet does not). Fee scalar 0, the value the devnet has: it charges no L1
 * data fee (anvil 1.7.1 `--optimism` charges none: with an overhead of 2,100, a scalar of 1,000,000 and a
 * 1 gwei base fee in L1Block, a transfer still cost exactly its gas), and SystemConfig's `scalar()` is
 * Ecotone-encoded (version byte 1, base-fee and blob-base-fee scalars packed), which only
 * `setL1BlockValuesEcotone` can carry: in this legacy field GasPriceOracle would read it as a scalar of
 * about 10^74 and quote absurd L1 fees, where the devnet's L2 charges none.
 */
export class L1AttributesUpdater extends BackgroundService<number> {
  readonly #options: L1AttributesUpdaterOptions;
  readonly #waiters = new Set<Waiter>();
  #depositor: string | undefined;
  /** The highest L1 block whose values were sent (mined or queued), as of this instance's last pass. */
  #submitted: number | undefined;
  #l1Heads: HeadSubscription | undefined;
  #l2Heads: HeadSubscription | undefined;

  constructor(options: L1AttributesUpdaterOptions) {
    super(options);
    this.#options = options;
  }

  /** Follows L1 from now on: a pass at once (catching up from what L1Block knows), then one per L1 block. */
  override start(): void {
    super.start();
    this.#l1Heads ??= subscribeNewHeads(
      this.#options.l1WsUrl,
      () => this.wake(),
      (error) => {
        this.#l1Heads = undefined;
        this.#options.onError?.(error);
      },
    );
    // A block mined while subscribing was announced to nobody: one more pass once the subscription is up.
    void this.#l1Heads.ready.then(
      () => this.wake(),
      () => undefined,
    );
  }

  /** Stops following L1 and waits for the pass in progress. Waiters of `caughtUp` keep waiting. */
  override async stop(): Promise<void> {
    this.#l1Heads?.close();
    this.#l1Heads = undefined;
    await super.stop();
  }

  /** The L1 block number L2's `L1Block` knows at `blockTag` (`latest`: mined; `pending`: with the queued calls). */
  async knownBlock(blockTag: string | number = "latest"): Promise<number> {
    const data = await this.#options.l2.call({ to: L2_PREDEPLOYS.L1Block, data: l1Block.encodeFunctionData("number"), blockTag });
    return Number(l1Block.decodeFunctionResult("number", data)[0] as bigint);
  }

  /**
   * Resolves once L1Block, in the L2's latest block, knows L1 block `l1BlockNumber` (or a later one):
   * what a test or a service awaits before reading the L1 attributes on L2. Event-driven: checked now and
   * at every L2 block (`newHeads`), whoever made the update, this updater or another instance after a
   * restart. Rejects only if the L2's subscription fails (its anvil is gone, as when the devnet stops).
   */
  caughtUp(l1BlockNumber: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiters.add({ l1BlockNumber, resolve, reject });
      this.#followL2();
      // After the waiter is registered, so that an L2 block mined meanwhile cannot be missed.
      void this.#settleWaiters("latest");
    });
  }

  /**
   * Makes sure the values of L1 block `l1BlockNumber` are in L1Block or queued for it, running a pass
   * now if needed (or joining the one running). The deposit relay calls it before sending a deposit of
   * that L1 block, so that the block's attributes come first, as op-node orders the system deposit first
   * among an L2 block's deposits. Works whether the updater runs or not, so deposits never wait for it.
   */
  async submitUpTo(l1BlockNumber: number): Promise<void> {
    // A pass joined while running may have read the L1 head before this block existed, and end without it;
    // the pass after it starts afresh and sees it. Two passes in a row without progress mean a real failure.
    let idlePasses = 0;
    while (this.#submitted === undefined || this.#submitted < l1BlockNumber) {
      const before = this.#submitted;
      await this.runPass();
      idlePasses = this.#submitted === before ? idlePasses + 1 : 0;
      if (idlePasses === 2) {
        throw new Error(`the values of L1 block ${l1BlockNumber} were not sent: L1Block stays at block ${String(before)}`);
      }
    }
  }

  protected async pass(isStopping: () => boolean): Promise<number> {
    const { l1 } = this.#options;
    const [head, known] = await Promise.all([l1.getBlockNumber(), this.knownBlock("pending")]);
    this.#submitted = known;
    let next = known === 0 ? head : known + 1;
    if (next > head) return 0;
    // The reads run ahead of the sends (the depositor's preparation and the values of the next blocks, all
    // at once), so a new L1 block is queued two round trips after its head: the next L2 block must carry it.
    const depositorReady = this.#prepareDepositor();
    const values = new Map<number, Promise<L1BlockValues>>();
    const readAhead = (last: number) => {
      for (let block = next; block <= Math.min(last, head); block++) {
        if (values.has(block)) continue;
        const read = this.valuesOf(block);
        read.catch(() => undefined); // awaited below, unless the pass stops or fails first
        values.set(block, read);
      }
    };
    readAhead(next + VALUES_READ_AHEAD - 1);
    const depositor = await depositorReady;
    let sent = 0;
    for (; next <= head && !isStopping(); next += 1) {
      readAhead(next + VALUES_READ_AHEAD - 1);
      const blockValues = await values.get(next)!;
      values.delete(next);
      await this.#sendValues(depositor, blockValues);
      this.#submitted = next;
      sent += 1;
    }
    return sent;
  }

  /**
   * Sends L1 block `l1BlockNumber`'s values now, skipping those of the blocks between L1Block's and it, and
   * returns the L2 transaction's hash (mined with the L2's next block). For a tool that mined thousands of
   * L1 blocks no L2 reader needs (the rehearsal's vote): one call instead of one per block. Stop the
   * updater first, or its pass would send the skipped blocks' values after these.
   */
  async jumpTo(l1BlockNumber: number): Promise<string> {
    const hash = await this.#sendValues(await this.#prepareDepositor(), await this.valuesOf(l1BlockNumber));
    if (this.#submitted === undefined || this.#submitted < l1BlockNumber) this.#submitted = l1BlockNumber;
    return hash;
  }

  /** One `setL1BlockValues` call from the impersonated depositor; resolves to its hash once the L2 took it. */
  async #sendValues(depositor: string, values: L1BlockValues): Promise<string> {
    const data = l1Block.encodeFunctionData("setL1BlockValues", [
      values.number,
      values.timestamp,
      values.basefee,
      values.hash,
      values.sequenceNumber,
      values.batcherHash,
      values.l1FeeOverhead,
      values.l1FeeScalar,
    ]);
    return (await this.#options.l2.send("eth_sendTransaction", [
      {
        from: depositor,
        to: L2_PREDEPLOYS.L1Block,
        data,
        gas: toQuantity(SET_VALUES_GAS),
        maxFeePerGas: toQuantity(MAX_FEE_PER_GAS),
        maxPriorityFeePerGas: "0x0",
      },
    ])) as string;
  }

  /** The values this updater sends for L1 block `l1BlockNumber` (see the class comment for each field). */
  async valuesOf(l1BlockNumber: number): Promise<L1BlockValues> {
    const { l1 } = this.#options;
    const read = (name: "batcherHash" | "overhead") =>
      l1.call({ to: this.#options.systemConfig, data: systemConfig.encodeFunctionData(name), blockTag: l1BlockNumber });
    const [block, batcherHash, overhead] = await Promise.all([l1.getBlock(l1BlockNumber), read("batcherHash"), read("overhead")]);
    if (block === null || block.hash === null) throw new Error(`L1 block ${l1BlockNumber} does not exist`);
    return {
      number: BigInt(block.number),
      timestamp: BigInt(block.timestamp),
      basefee: block.baseFeePerGas ?? 0n,
      hash: block.hash,
      sequenceNumber: 0n,
      batcherHash: systemConfig.decodeFunctionResult("batcherHash", batcherHash)[0] as string,
      l1FeeOverhead: systemConfig.decodeFunctionResult("overhead", overhead)[0] as bigint,
      l1FeeScalar: 0n,
    };
  }

  /** The depositor account, impersonated on the L2 and funded for gas; its address is the contract's. */
  async #prepareDepositor(): Promise<string> {
    const { l2 } = this.#options;
    if (this.#depositor === undefined) {
      const data = await l2.call({ to: L2_PREDEPLOYS.L1Block, data: l1Block.encodeFunctionData("DEPOSITOR_ACCOUNT") });
      this.#depositor = l1Block.decodeFunctionResult("DEPOSITOR_ACCOUNT", data)[0] as string;
    }
    const depositor = this.#depositor;
    // Impersonation belongs to the node, not to this instance: asking again is harmless and covers a
    // node that was told to stop impersonating.
    const [, balance] = await Promise.all([l2.send("anvil_impersonateAccount", [depositor]), l2.getBalance(depositor)]);
    if (balance < DEPOSITOR_FUNDS / 10n) {
      await l2.send("anvil_setBalance", [depositor, toQuantity(DEPOSITOR_FUNDS)]);
    }
    return depositor;
  }

  /** Opens the L2 subscription while someone waits; it closes again once nobody does. */
  #followL2(): void {
    if (this.#l2Heads !== undefined) return;
    const subscription = subscribeNewHeads(
      this.#options.l2WsUrl,
      (blockNumber) => void this.#settleWaiters(blockNumber),
      (error) => {
        if (this.#l2Heads === subscription) this.#l2Heads = undefined;
        for (const waiter of this.#waiters) waiter.reject(error);
        this.#waiters.clear();
      },
    );
    this.#l2Heads = subscription;
    // An L2 block mined while subscribing was announced to nobody: check once more when it is up.
    void subscription.ready.then(
      () => this.#settleWaiters("latest"),
      () => undefined,
    );
  }

  /** Resolves every waiter whose block L1Block knows at `blockTag`; closes the L2 subscription when none is left. */
  async #settleWaiters(blockTag: string | number): Promise<void> {
    if (this.#waiters.size === 0) return;
    let known: number;
    try {
      known = await this.knownBlock(blockTag);
    } catch (error) {
      // The next L2 block checks again; a waiter is rejected only when the L2 itself is gone.
      this.#options.onError?.(error);
      return;
    }
    for (const waiter of this.#waiters) {
      if (waiter.l1BlockNumber > known) continue;
      this.#waiters.delete(waiter);
      waiter.resolve();
    }
    if (this.#waiters.size === 0) {
      this.#l2Heads?.close();
      this.#l2Heads = undefined;
    }
  }
}
