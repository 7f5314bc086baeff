import type { DatabaseSync } from "node:sqlite";

import { JournalDatabase } from "../common/journal-database.ts";

/**
 * Where an order stands for this solver:
 * - `seen`: its `Open` event was read, nothing decided yet;
 * - `skipped`: the policy declined it (the reason is kept), or another filler filled it first;
 * - `filling`: a fill transaction was signed and journaled, and may be on its way (its raw bytes are kept, so
 *   that a restart sends exactly it again, never a second one);
 * - `filled`: the fill is mined on the destination chain, at `fillBlock`; the escrow is owed to this solver (a fast
 *   deposit's fill is then reported to L1: `settleHash` is the report's L2 transaction);
 * - `settled`: the escrow was paid to the solver on the origin chain;
 * - `expired`: the fill deadline passed before a fill was sent, or the order was refunded.
 */
export type OrderState = "seen" | "skipped" | "filling" | "filled" | "settled" | "expired";

export interface JournaledOrder {
  orderId: string;
  originData: string;
  state: OrderState;
  /** The origin chain's block of its `Open` event. */
  openBlock: number;
  reason?: string;
  fillRaw?: string;
  fillHash?: string;
  fillBlock?: number;
  settleHash?: string;
}

interface OrderRow {
  order_id: string;
  origin_data: string;
  state: OrderState;
  open_block: number;
  reason: string | null;
  fill_raw: string | null;
  fill_hash: string | null;
  fill_block: number | null;
  settle_hash: string | null;
}

/** A withdrawal through the standard bridge that moves earned escrow back to the L1 inventory. */
export interface JournaledWithdrawal {
  l2TxHash: string;
  asset: "eth" | "token";
  amount: bigint;
  state: "initiated" | "proven" | "finalized";
}

/** A report of fast deposits' fills (an L2 → L1 message) that the solver drives to its relay on L1. */
export interface JournaledReport {
  l2TxHash: string;
  state: "initiated" | "proven" | "finalized";
}

/**
 * The solver's journal (SQLite, `node:sqlite`, in its state directory): every order it has seen and what it did
 * with it, the last L2 block whose `Open` events are all read, and its rebalancing withdrawals. A fill is journaled,
 * signed, before it is broadcast, and its state moves only forward, so a solver killed at any point finds on restart
 * every fill it may have sent and every escrow it is owed: it settles those, and sends again only the exact fill it
 * signed. It is anchored to one pair of settlers: a journal of another deployment is cleared.
 */
export class SolverJournal {
  readonly #journal: JournalDatabase;
  readonly #db: DatabaseSync;

  constructor(file: string) {
    this.#journal = new JournalDatabase(
      file,
      `
      CREATE TABLE IF NOT EXISTS orders (
        order_id TEXT PRIMARY KEY, origin_data TEXT NOT NULL, state TEXT NOT NULL, open_block INTEGER NOT NULL,
        reason TEXT, fill_raw TEXT, fill_hash TEXT, fill_block INTEGER, settle_hash TEXT
      );
      CREATE TABLE IF NOT EXISTS withdrawals (
        l2_tx_hash TEXT PRIMARY KEY, asset TEXT NOT NULL, amount TEXT NOT NULL, state TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS reports (l2_tx_hash TEXT PRIMARY KEY, state TEXT NOT NULL);
    `,
      ["orders", "withdrawals", "reports"],
    );
    this.#db = this.#journal.db;
  }

  /** Clears the journal when it belongs to other settlers or chains; returns whether it did. */
  anchor(anchor: string): boolean {
    return this.#journal.anchor(anchor);
  }

  /** The last L2 block whose `Open` events are all journaled. */
  cursor(): number | undefined {
    const value = this.#journal.meta("cursor");
    return value === undefined ? undefined : Number(value);
  }

  setCursor(block: number): void {
    this.#journal.setMeta("cursor", String(block));
  }

  /** Journals an order seen in an `Open` event; one seen already keeps its state. Returns whether it was new. */
  addSeen(order: { orderId: string; originData: string; openBlock: number }): boolean {
    const { changes } = this.#db
      .prepare("INSERT OR IGNORE INTO orders (order_id, origin_data, state, open_block) VALUES (?, ?, 'seen', ?)")
      .run(order.orderId, order.originData, order.openBlock);
    return Number(changes) > 0;
  }

  get(orderId: string): JournaledOrder | undefined {
    const row = this.#db.prepare("SELECT * FROM orders WHERE order_id = ?").get(orderId) as OrderRow | undefined;
    return row === undefined ? undefined : fromRow(row);
  }

  /** The orders in `state`, oldest first. */
  inState(state: OrderState): JournaledOrder[] {
    const rows = this.#db.prepare("SELECT * FROM orders WHERE state = ? ORDER BY open_block, rowid").all(state) as unknown as OrderRow[];
    return rows.map(fromRow);
  }

  skip(orderId: string, reason: string): void {
    this.#move(orderId, ["seen", "filling"], "skipped", { reason });
  }

  expire(orderId: string, reason: string): void {
    this.#move(orderId, ["seen", "filling", "filled"], "expired", { reason });
  }

  /** Journals the signed fill before it is broadcast. */
  filling(orderId: string, fill: { raw: string; hash: string }): void {
    this.#move(orderId, ["seen"], "filling", { fill_raw: fill.raw, fill_hash: fill.hash });
  }

  filled(orderId: string, fillBlock: number): void {
    this.#move(orderId, ["filling"], "filled", { fill_block: fillBlock });
  }

  /** Notes the settlement sent (a restart that finds the order still open settles again: a second one only reverts). */
  settling(orderId: string, settleHash: string): void {
    this.#db.prepare("UPDATE orders SET settle_hash = ? WHERE order_id = ?").run(settleHash, orderId);
  }

  settled(orderId: string): void {
    this.#move(orderId, ["filled"], "settled", {});
  }

  addWithdrawal(withdrawal: Omit<JournaledWithdrawal, "state">): void {
    this.#db
      .prepare("INSERT INTO withdrawals (l2_tx_hash, asset, amount, state) VALUES (?, ?, ?, 'initiated')")
      .run(withdrawal.l2TxHash, withdrawal.asset, String(withdrawal.amount));
  }

  setWithdrawalState(l2TxHash: string, state: JournaledWithdrawal["state"]): void {
    this.#db.prepare("UPDATE withdrawals SET state = ? WHERE l2_tx_hash = ?").run(state, l2TxHash);
  }

  /** Withdrawals not finalized yet: their amounts are on their way to the L1. */
  pendingWithdrawals(): JournaledWithdrawal[] {
    const rows = this.#db.prepare("SELECT * FROM withdrawals WHERE state != 'finalized' ORDER BY rowid").all() as Array<{
      l2_tx_hash: string;
      asset: "eth" | "token";
      amount: string;
      state: JournaledWithdrawal["state"];
    }>;
    return rows.map((row) => ({ l2TxHash: row.l2_tx_hash, asset: row.asset, amount: BigInt(row.amount), state: row.state }));
  }

  /** Filled orders no report names yet, oldest first. */
  unreported(): JournaledOrder[] {
    const rows = this.#db
      .prepare("SELECT * FROM orders WHERE state = 'filled' AND settle_hash IS NULL ORDER BY open_block, rowid")
      .all() as unknown as OrderRow[];
    return rows.map(fromRow);
  }

  /** Journals a report sent on the L2, and the orders it names, at once. */
  addReport(l2TxHash: string, orderIds: string[]): void {
    this.#journal.transaction(() => {
      this.#db.prepare("INSERT INTO reports (l2_tx_hash, state) VALUES (?, 'initiated')").run(l2TxHash);
      const name = this.#db.prepare("UPDATE orders SET settle_hash = ? WHERE order_id = ?");
      for (const orderId of orderIds) name.run(l2TxHash, orderId);
    });
  }

  /** Forgets a report that will never be relayed (it reverted, or never left): its orders are unreported again. */
  dropReport(l2TxHash: string): void {
    this.#journal.transaction(() => {
      this.#db.prepare("UPDATE orders SET settle_hash = NULL WHERE settle_hash = ? AND state = 'filled'").run(l2TxHash);
      this.#db.prepare("DELETE FROM reports WHERE l2_tx_hash = ?").run(l2TxHash);
    });
  }

  setReportState(l2TxHash: string, state: JournaledReport["state"]): void {
    this.#db.prepare("UPDATE reports SET state = ? WHERE l2_tx_hash = ?").run(state, l2TxHash);
  }

  /** Reports not finalized on L1 yet. */
  pendingReports(): JournaledReport[] {
    const rows = this.#db.prepare("SELECT * FROM reports WHERE state != 'finalized' ORDER BY rowid").all() as Array<{
      l2_tx_hash: string;
      state: JournaledReport["state"];
    }>;
    return rows.map((row) => ({ l2TxHash: row.l2_tx_hash, state: row.state }));
  }

  /** The filled orders a report names. */
  ordersOfReport(l2TxHash: string): JournaledOrder[] {
    const rows = this.#db
      .prepare("SELECT * FROM orders WHERE state = 'filled' AND settle_hash = ? ORDER BY rowid")
      .all(l2TxHash) as unknown as OrderRow[];
    return rows.map(fromRow);
  }

  close(): void {
    this.#journal.close();
  }

  /** Moves an order forward from one of `from` to `to`; a move from any other state is a bug, and throws. */
  #move(orderId: string, from: OrderState[], to: OrderState, columns: Record<string, string | number>): void {
    const names = Object.keys(columns);
    const assignments = ["state = ?", ...names.map((name) => `${name} = ?`)].join(", ");
    const placeholders = from.map(() => "?").join(", ");
    const { changes } = this.#db
      .prepare(`UPDATE orders SET ${assignments} WHERE order_id = ? AND state IN (${placeholders})`)
      .run(to, ...names.map((name) => columns[name]), orderId, ...from);
    if (Number(changes) !== 1) throw new Error(`order ${orderId} cannot move to ${to} from ${this.get(orderId)?.state ?? "nowhere"}`);
  }
}

function fromRow(row: OrderRow): JournaledOrder {
  return {
    orderId: row.order_id,
    originData: row.origin_data,
    state: row.state,
    openBlock: Number(row.open_block),
    reason: row.reason ?? undefined,
    fillRaw: row.fill_raw ?? undefined,
    fillHash: row.fill_hash ?? undefined,
    fillBlock: row.fill_block === null ? undefined : Number(row.fill_block),
    settleHash: row.settle_hash ?? undefined,
  };
}
