import { type Bridge, BridgeError } from "@avn/bridge";
import type { Provider } from "ethers";
import type { Logger } from "pino";

import { OrderStatus } from "@avn/protocol/intents";
import type { L1OriginSettler, L2DestinationSettler } from "../../typechain-types/index.ts";
import { describeError } from "../common/describe-error.ts";
import type { JournaledReport, SolverJournal } from "./journal.ts";
import { finalizationNotElapsed } from "./portal-errors.ts";

/**
 * Settles the solver's fast deposits (L1 → L2): reports its filled orders to the L1 origin settler through the L2
 * destination settler (`reportFills`, up to `MAX_REPORT` orders in one L2 → L1 message, sent once the oldest has
 * waited `delaySeconds` for others to join it, or the report is full), then drives each report like
 * a withdrawal of the standard bridge: proven on L1 once an L2 output covers it, finalized after the challenge period
 * (seconds on the devnet, seven days live), which relays it and pays the escrows. Each report is journaled with the
 * orders it names, so a restart goes on with it; a report sent but not journaled (a kill in between) is sent again,
 * and its relay skips what the first one settled.
 */
export class Reporter {
  readonly #destination: L2DestinationSettler;
  readonly #l2: Provider;
  readonly #origin: L1OriginSettler;
  readonly #bridge: Bridge;
  readonly #journal: SolverJournal;
  readonly #logger: Logger;
  readonly #delaySeconds: number;

  constructor(options: {
    /** The L2, where the reports are sent. */
    l2: Provider;
    destination: L2DestinationSettler;
    origin: L1OriginSettler;
    bridge: Bridge;
    journal: SolverJournal;
    logger: Logger;
    /** How long a fill may wait for others to share its report, in seconds of L2 time (0: reported at once). */
    delaySeconds: number;
  }) {
    this.#destination = options.destination;
    this.#l2 = options.l2;
    this.#origin = options.origin;
    this.#bridge = options.bridge;
    this.#journal = options.journal;
    this.#logger = options.logger;
    this.#delaySeconds = options.delaySeconds;
  }

  /** Reports what is filled and unreported, and moves every pending report one step. Returns whether it sent on L1. */
  async pass(): Promise<boolean> {
    await this.#report();
    let sentOnL1 = false;
    for (const report of this.#journal.pendingReports()) {
      try {
        sentOnL1 = (await this.#advance(report)) || sentOnL1;
      } catch (error) {
        // Early by a block (said nothing of), or anything else (said): the next block tries again.
        if (finalizationNotElapsed(error)) continue;
        this.#logger.warn(
          { lane: "deposits", reportTx: report.l2TxHash, reason: describeError(error) },
          "report not advanced; the next block tries again",
        );
      }
    }
    return sentOnL1;
  }

  async #report(): Promise<void> {
    const unreported = this.#journal.unreported();
    if (unreported.length === 0) return;
    const max = Number(await this.#destination.MAX_REPORT());
    const oldestFill = Math.min(...unreported.map((order) => order.fillBlock!));
    if (unreported.length < max && !(await this.#waitedLongEnough(oldestFill))) return;
    for (let start = 0; start < unreported.length; start += max) {
      const batch = unreported.slice(start, start + max);
      // The estimate runs first (a report the settler refuses throws here, before anything is sent or journaled). It
      // is not waited for: the pass goes on, and the next one finds it mined (`#advance`), so that a fill the next
      // L1 block asks for is not held up by an L2 block's wait.
      const tx = await this.#destination.reportFills(batch.map((order) => order.originData));
      this.#journal.addReport(
        tx.hash,
        batch.map((order) => order.orderId),
      );
      this.#logger.info({ lane: "deposits", reportTx: tx.hash, orders: batch.length }, "fills reported to L1");
    }
  }

  /** Whether the oldest unreported fill (at L2 block `fillBlock`) has waited the delay, by the L2's clock. */
  async #waitedLongEnough(fillBlock: number): Promise<boolean> {
    if (this.#delaySeconds === 0) return true;
    const [filled, latest] = await Promise.all([this.#l2.getBlock(fillBlock), this.#l2.getBlock("latest")]);
    return filled === null || latest === null || latest.timestamp - filled.timestamp >= this.#delaySeconds;
  }

  async #advance(report: JournaledReport): Promise<boolean> {
    const where = { lane: "deposits", reportTx: report.l2TxHash };
    if (report.state === "initiated") {
      const receipt = await this.#l2.getTransactionReceipt(report.l2TxHash);
      if (receipt === null && (await this.#l2.getTransaction(report.l2TxHash)) !== null) return false; // not mined yet
      if (receipt === null || receipt.status !== 1) {
        // Reverted, or never taken by the node (lost in a restart before it left): its orders are reported again.
        this.#journal.dropReport(report.l2TxHash);
        this.#logger.warn(
          { ...where, reason: receipt === null ? "unknown to the node" : "reverted" },
          "report lost; its fills are reported again",
        );
        return false;
      }
    }
    const { status } = await this.#bridge.status(report.l2TxHash);
    if (status === "READY_TO_PROVE") {
      await this.#bridge.prove(report.l2TxHash);
      this.#journal.setReportState(report.l2TxHash, "proven");
      this.#logger.info(where, "report proven on L1");
      return true;
    }
    if (status === "READY_FOR_RELAY") {
      try {
        await this.#bridge.finalize(report.l2TxHash);
      } catch (error) {
        if (!(error instanceof BridgeError && error.code === "ALREADY_FINALIZED")) throw error;
      }
      const after = await this.#bridge.status(report.l2TxHash);
      if (after.status === "RELAYED") await this.#settled(report);
      // The portal finalizes a withdrawal whose relay fails without reverting: the message waits for a replay.
      else this.#logger.error({ ...where, status: after.status }, "report finalized on L1 but not relayed; replay it");
      this.#journal.setReportState(report.l2TxHash, "finalized");
      return true;
    }
    if (status === "RELAYED") {
      await this.#settled(report);
      this.#journal.setReportState(report.l2TxHash, "finalized");
    }
    return false;
  }

  /** Journals how the relay left each order of a report: paid to the solver, or refunded to its user before. */
  async #settled(report: JournaledReport): Promise<void> {
    for (const order of this.#journal.ordersOfReport(report.l2TxHash)) {
      const status = Number(await this.#origin.orderStatus(order.orderId));
      if (status === OrderStatus.settled) {
        this.#journal.settled(order.orderId);
        this.#logger.info({ lane: "deposits", orderId: order.orderId, reportTx: report.l2TxHash }, "order settled");
      } else if (status === OrderStatus.refunded) {
        this.#journal.expire(order.orderId, "refunded to its user before settlement");
        this.#logger.error(
          { lane: "deposits", orderId: order.orderId },
          "a filled order was refunded before its report arrived: its escrow is lost to the solver",
        );
      }
    }
  }
}
