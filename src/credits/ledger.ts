import type { CreditsDatabase, MovementKind } from "./database.ts";
import { PaymentBook } from "./payments.ts";
import { VoucherBook } from "./voucher-book.ts";

export interface AccountView {
  account: string;
  balance: number;
  owed: number;
  movements: Array<{ kind: MovementKind; amount: number; reference: string; createdAt: string }>;
}

/**
 * The credits ledger: every change of an account is a movement, written in the same transaction as the
 * account's new balance, so the sum of an account's movements is always its balance less what it owes.
 * Debits never take an account below zero: what a refund or a dispute takes beyond the balance (credits
 * already redeemed) is recorded as owed, and later credits pay it first. Each effect is keyed (a Stripe
 * event, a payment, a voucher, a client's request id), so a replay changes nothing. Payments and vouchers
 * are kept by their own books; the ledger reads accounts across both.
 */
export class Ledger {
  readonly #db: CreditsDatabase;
  readonly payments: PaymentBook;
  readonly vouchers: VoucherBook;

  constructor(db: CreditsDatabase, now: () => Date = () => new Date()) {
    this.#db = db;
    this.payments = new PaymentBook(db, now);
    this.vouchers = new VoucherBook(db, now);
  }

  async account(account: string): Promise<AccountView> {
    const row = await this.#db.selectFrom("credit_accounts").selectAll().where("account", "=", account).executeTakeFirst();
    const movements = await this.#db.selectFrom("credit_movements").selectAll().where("account", "=", account).orderBy("id").execute();
    return {
      account,
      balance: row?.balance ?? 0,
      owed: row?.owed ?? 0,
      movements: movements.map((movement) => ({
        kind: movement.kind,
        amount: movement.amount,
        reference: movement.reference,
        createdAt: movement.created_at,
      })),
    };
  }

  /** Accounts whose balance less what they owe is not the sum of their movements (none, always). */
  async unreconciled(): Promise<string[]> {
    const sums = await this.#db
      .selectFrom("credit_movements")
      .select(["account", (eb) => eb.fn.sum<number>("amount").as("total")])
      .groupBy("account")
      .execute();
    const accounts = await this.#db.selectFrom("credit_accounts").selectAll().execute();
    const total = new Map(sums.map((row) => [row.account, Number(row.total)]));
    const wrong = accounts
      .filter((row) => row.balance - row.owed !== (total.get(row.account) ?? 0) || (row.balance > 0 && row.owed > 0))
      .map((row) => row.account);
    for (const account of total.keys()) if (!accounts.some((row) => row.account === account)) wrong.push(account);
    return wrong;
  }
}
