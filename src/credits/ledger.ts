import type { Transaction } from "kysely";

import type { CreditsDatabase, CreditsSchema, MovementKind, VoucherStatus } from "./database.ts";

type Trx = Transaction<CreditsSchema>;

/** A refusal the credits service answers with its HTTP status. */
export class CreditsError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "CreditsError";
    this.status = status;
  }
}

export interface AccountView {
  account: string;
  balance: number;
  owed: number;
  movements: Array<{ kind: MovementKind; amount: number; reference: string; createdAt: string }>;
}

export interface VoucherRow {
  voucherId: string;
  requestId: string;
  account: string;
  recipient: string;
  itemId: number;
  quantity: number;
  amount: string;
  price: number;
  expiry: number;
  issuer: string;
  signature: string;
  status: VoucherStatus;
}

/** What the chain says of vouchers: a block to judge at, and whether a voucher was claimed by that block. */
export interface ClaimsReader {
  settlementPoint(): Promise<{ blockNumber: number; timestamp: number }>;
  isClaimed(voucherId: string, blockNumber: number): Promise<boolean>;
}

/**
 * How far past a voucher's expiry the chain must be before its credits come back: a lagging RPC node or
 * a reorganized unsafe block must not show a claim made at the last second as never made.
 */
export const EXPIRY_SETTLE_MARGIN_SECONDS = 300;

/** What a redemption's voucher is: its id, its terms, the issuer's signature, and where it is claimed. */
export interface SignedVoucher {
  voucherId: string;
  expiry: number;
  issuer: string;
  signature: string;
  claimsContract: string;
  chainId: bigint;
}

/**
 * The credits ledger: every change of an account is a movement, written in the same transaction as the
 * account's new balance, so the sum of an account's movements is always its balance less what it owes.
 * Debits never take an account below zero: what a refund or a dispute takes beyond the balance (credits
 * already redeemed) is recorded as owed, and later credits pay it first. Each effect is keyed (a Stripe
 * event, a payment, a voucher, a client's request id), so a replay changes nothing.
 */
export class Ledger {
  readonly #db: CreditsDatabase;
  readonly #now: () => Date;

  constructor(db: CreditsDatabase, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#now = now;
  }

  /**
   * Runs `apply` for Stripe event `eventId` once: a replay of an event already handled (or being handled:
   * the transaction serializes them) returns its recorded outcome and changes nothing.
   */
  async handleEventOnce(eventId: string, type: string, apply: (trx: Trx) => Promise<string>): Promise<{ duplicate: boolean; outcome: string }> {
    return this.#db.transaction().execute(async (trx) => {
      const seen = await trx.selectFrom("stripe_events").select("outcome").where("event_id", "=", eventId).executeTakeFirst();
      if (seen !== undefined) return { duplicate: true, outcome: seen.outcome };
      const outcome = await apply(trx);
      await trx.insertInto("stripe_events").values({ event_id: eventId, type, outcome, received_at: this.#iso() }).execute();
      return { duplicate: false, outcome };
    });
  }

  /**
   * A paid checkout: credits `credits` to `account` (or parks the payment with `problem` when it named no
   * valid account), then takes back what refunds and disputes that arrived before it hold.
   */
  async purchase(trx: Trx, input: { paymentIntent: string; session: string; account: string | null; credits: number; problem: string | null }): Promise<string> {
    const row = await trx.selectFrom("payments").selectAll().where("payment_intent", "=", input.paymentIntent).executeTakeFirst();
    if (row !== undefined && (row.purchased > 0 || row.problem !== null)) return "already credited";
    const account = input.problem === null ? input.account : null;
    if (row === undefined) {
      await trx
        .insertInto("payments")
        .values({ payment_intent: input.paymentIntent, checkout_session: input.session, account, purchased: input.credits, refunded: 0, disputed: 0, taken: 0, problem: input.problem, created_at: this.#iso() })
        .execute();
    } else {
      await trx.updateTable("payments").set({ checkout_session: input.session, account, purchased: input.credits, problem: input.problem }).where("payment_intent", "=", input.paymentIntent).execute();
    }
    if (account === null) return `not credited: ${input.problem}`;
    await this.#move(trx, account, input.credits, "purchase", input.paymentIntent);
    const early = row ?? { refunded: 0, disputed: 0 };
    await this.#settle(trx, input.paymentIntent, early.refunded >= early.disputed ? "refund" : "dispute", `${input.paymentIntent}:before-purchase`);
    return `credited ${input.credits}`;
  }

  /** A refund: the payment's refunded credits are now `refundedTotal` (Stripe states the running total). */
  async refund(trx: Trx, input: { paymentIntent: string; refundedTotal: number; eventId: string }): Promise<string> {
    const row = await this.#paymentRow(trx, input.paymentIntent);
    if (input.refundedTotal > row.refunded) {
      await trx.updateTable("payments").set({ refunded: input.refundedTotal }).where("payment_intent", "=", input.paymentIntent).execute();
    }
    // Referenced by payment and event: one movement per refund event, each traceable to its purchase.
    return this.#settle(trx, input.paymentIntent, "refund", `${input.paymentIntent}:${input.eventId}`);
  }

  /** A dispute opened: what it disputes is taken back (as far as the payment still has it). */
  async disputeOpened(trx: Trx, input: { paymentIntent: string; disputeId: string; credits: number }): Promise<string> {
    const existing = await trx.selectFrom("disputes").select("status").where("dispute_id", "=", input.disputeId).executeTakeFirst();
    if (existing !== undefined) return "already recorded";
    const row = await this.#paymentRow(trx, input.paymentIntent);
    await trx.insertInto("disputes").values({ dispute_id: input.disputeId, payment_intent: input.paymentIntent, credits: input.credits, status: "open" }).execute();
    await trx.updateTable("payments").set({ disputed: row.disputed + input.credits }).where("payment_intent", "=", input.paymentIntent).execute();
    return this.#settle(trx, input.paymentIntent, "dispute", input.disputeId);
  }

  /** A dispute closed: won, what it held comes back; lost, it stays taken. */
  async disputeClosed(trx: Trx, input: { paymentIntent: string; disputeId: string; credits: number; won: boolean }): Promise<string> {
    let dispute = await trx.selectFrom("disputes").selectAll().where("dispute_id", "=", input.disputeId).executeTakeFirst();
    if (dispute === undefined) {
      // Its opening never arrived (or arrives later): record it as opened, then close it.
      await this.disputeOpened(trx, input);
      dispute = await trx.selectFrom("disputes").selectAll().where("dispute_id", "=", input.disputeId).executeTakeFirstOrThrow();
    }
    if (dispute.status !== "open") return `already ${dispute.status}`;
    await trx.updateTable("disputes").set({ status: input.won ? "won" : "lost" }).where("dispute_id", "=", input.disputeId).execute();
    if (!input.won) return "lost: stays taken";
    const row = await this.#paymentRow(trx, input.paymentIntent);
    await trx.updateTable("payments").set({ disputed: row.disputed - dispute.credits }).where("payment_intent", "=", input.paymentIntent).execute();
    return `won: ${await this.#settle(trx, input.paymentIntent, "dispute_won", input.disputeId)}`;
  }

  /**
   * Brings what a payment took back from its account to what it should: the refunded total and the open
   * or lost disputes, never more than the payment credited. The difference is one movement (a debit, or a
   * credit when a dispute was won).
   */
  async #settle(trx: Trx, paymentIntent: string, kind: MovementKind, reference: string): Promise<string> {
    const row = await trx.selectFrom("payments").selectAll().where("payment_intent", "=", paymentIntent).executeTakeFirstOrThrow();
    if (row.account === null) return "recorded before its purchase";
    const target = Math.min(row.purchased, row.refunded + row.disputed);
    const delta = target - row.taken;
    if (delta === 0) return "nothing to change";
    await trx.updateTable("payments").set({ taken: target }).where("payment_intent", "=", paymentIntent).execute();
    await this.#move(trx, row.account, -delta, kind, reference);
    return delta > 0 ? `debited ${delta}` : `credited back ${-delta}`;
  }

  /**
   * Spends `price` credits of `account` on a voucher, once per `requestId`: the same request again returns
   * the voucher made the first time; another request under the same id is refused.
   */
  async redeem(input: {
    account: string;
    requestId: string;
    itemId: number;
    quantity: number;
    recipient: string;
    price: number;
    amount: bigint;
    /** The stock the claim will spend (undefined for a minted item): what vouchers still out already promise counts against it. */
    stock: { pool: string; available: bigint } | undefined;
    /** Signs the voucher: local work only (the transaction holds the ledger meanwhile). */
    sign: () => Promise<SignedVoucher>;
  }): Promise<{ voucher: VoucherRow; replayed: boolean }> {
    return this.#db.transaction().execute(async (trx) => {
      const earlier = await this.earlierRedemption(input, trx);
      if (earlier !== undefined) return { voucher: earlier, replayed: true };
      const { balance } = await this.#accountRow(trx, input.account);
      if (balance < input.price) throw new CreditsError(402, `Not enough credits: the item costs ${input.price}, the account holds ${balance}`);
      if (input.stock !== undefined) {
        const promised = await trx.selectFrom("vouchers").select("amount").where("pool", "=", input.stock.pool).where("status", "=", "issued").execute();
        const outstanding = promised.reduce((sum, row) => sum + BigInt(row.amount), 0n);
        if (outstanding + input.amount > input.stock.available) throw new CreditsError(409, "Out of stock: the claim platform holds no more of this item than vouchers already promise");
      }
      const signed = await input.sign();
      await this.#move(trx, input.account, -input.price, "redemption", signed.voucherId);
      const row = {
        voucher_id: signed.voucherId,
        request_id: input.requestId,
        account: input.account,
        recipient: input.recipient,
        item_id: input.itemId,
        quantity: input.quantity,
        amount: input.amount.toString(),
        pool: input.stock?.pool ?? null,
        price: input.price,
        expiry: signed.expiry,
        issuer: signed.issuer,
        signature: signed.signature,
        claims_contract: signed.claimsContract.toLowerCase(),
        chain_id: signed.chainId.toString(),
        status: "issued" as const,
        created_at: this.#iso(),
      };
      await trx.insertInto("vouchers").values(row).execute();
      return { voucher: voucherRow(row), replayed: false };
    });
  }

  /**
   * The voucher made earlier under `terms.requestId`, when the request is the same (account, item, quantity
   * and recipient: a price changed since does not make it another); undefined when the id is new; a 409
   * when it was used for another redemption.
   */
  async earlierRedemption(
    terms: { account: string; requestId: string; itemId: number; quantity: number; recipient: string },
    trx: Trx | CreditsDatabase = this.#db,
  ): Promise<VoucherRow | undefined> {
    const earlier = await trx.selectFrom("vouchers").selectAll().where("request_id", "=", terms.requestId).executeTakeFirst();
    if (earlier === undefined) return undefined;
    const same = earlier.account === terms.account && earlier.item_id === terms.itemId && earlier.quantity === terms.quantity && earlier.recipient === terms.recipient;
    if (!same) throw new CreditsError(409, "This request id was used for another redemption");
    return voucherRow(earlier);
  }

  /**
   * Brings `account`'s issued vouchers up to date with the chain, judged at one block: claimed ones are
   * marked so, and one still unclaimed when that block is `EXPIRY_SETTLE_MARGIN_SECONDS` past its expiry
   * gives its credits back (the claim contract refuses it after its expiry, so they cannot be spent
   * twice). A voucher of a rotated-out issuer key waits for its expiry the same way: the key could be
   * set again, and the voucher with it.
   */
  async settleVouchers(account: string, chain: ClaimsReader): Promise<void> {
    const issued = await this.#db.selectFrom("vouchers").selectAll().where("account", "=", account).where("status", "=", "issued").execute();
    if (issued.length === 0) return;
    const point = await chain.settlementPoint();
    // Asked together: the JSON-RPC provider sends them as one batch.
    const claimed = await Promise.all(issued.map((voucher) => chain.isClaimed(voucher.voucher_id, point.blockNumber)));
    for (const [index, voucher] of issued.entries()) {
      if (claimed[index]) {
        await this.#db.updateTable("vouchers").set({ status: "claimed" }).where("voucher_id", "=", voucher.voucher_id).execute();
      } else if (point.timestamp > voucher.expiry + EXPIRY_SETTLE_MARGIN_SECONDS) {
        await this.#db.transaction().execute(async (trx) => {
          const still = await trx.selectFrom("vouchers").select("status").where("voucher_id", "=", voucher.voucher_id).executeTakeFirstOrThrow();
          if (still.status !== "issued") return;
          await trx.updateTable("vouchers").set({ status: "expired" }).where("voucher_id", "=", voucher.voucher_id).execute();
          await this.#move(trx, voucher.account, voucher.price, "voucher_expired", voucher.voucher_id);
        });
      }
    }
  }

  /** The claim contracts and chains of vouchers still out that are not `claimsContract` on `chainId`. */
  async outstandingElsewhere(claimsContract: string, chainId: bigint): Promise<string[]> {
    const rows = await this.#db
      .selectFrom("vouchers")
      .select(["claims_contract", "chain_id"])
      .distinct()
      .where("status", "=", "issued")
      .where((eb) => eb.or([eb("claims_contract", "!=", claimsContract.toLowerCase()), eb("chain_id", "!=", chainId.toString())]))
      .execute();
    return rows.map((row) => `${row.claims_contract} on chain ${row.chain_id}`);
  }

  async account(account: string): Promise<AccountView> {
    const row = await this.#db.selectFrom("credit_accounts").selectAll().where("account", "=", account).executeTakeFirst();
    const movements = await this.#db.selectFrom("credit_movements").selectAll().where("account", "=", account).orderBy("id").execute();
    return {
      account,
      balance: row?.balance ?? 0,
      owed: row?.owed ?? 0,
      movements: movements.map((movement) => ({ kind: movement.kind, amount: movement.amount, reference: movement.reference, createdAt: movement.created_at })),
    };
  }

  async vouchers(account: string): Promise<VoucherRow[]> {
    return (await this.#db.selectFrom("vouchers").selectAll().where("account", "=", account).orderBy("created_at").execute()).map(voucherRow);
  }

  /** Accounts whose balance less what they owe is not the sum of their movements (none, always). */
  async unreconciled(): Promise<string[]> {
    const sums = await this.#db.selectFrom("credit_movements").select(["account", (eb) => eb.fn.sum<number>("amount").as("total")]).groupBy("account").execute();
    const accounts = await this.#db.selectFrom("credit_accounts").selectAll().execute();
    const total = new Map(sums.map((row) => [row.account, Number(row.total)]));
    const wrong = accounts.filter((row) => row.balance - row.owed !== (total.get(row.account) ?? 0) || (row.balance > 0 && row.owed > 0)).map((row) => row.account);
    for (const account of total.keys()) if (!accounts.some((row) => row.account === account)) wrong.push(account);
    return wrong;
  }

  async #paymentRow(trx: Trx, paymentIntent: string): Promise<CreditsSchema["payments"]> {
    const row = await trx.selectFrom("payments").selectAll().where("payment_intent", "=", paymentIntent).executeTakeFirst();
    if (row !== undefined) return row;
    const placeholder = { payment_intent: paymentIntent, checkout_session: null, account: null, purchased: 0, refunded: 0, disputed: 0, taken: 0, problem: null, created_at: this.#iso() };
    await trx.insertInto("payments").values(placeholder).execute();
    return placeholder;
  }

  async #accountRow(trx: Trx, account: string): Promise<{ balance: number; owed: number }> {
    return (await trx.selectFrom("credit_accounts").select(["balance", "owed"]).where("account", "=", account).executeTakeFirst()) ?? { balance: 0, owed: 0 };
  }

  /** Adds `amount` (negative: takes) to `account`: a debit beyond the balance becomes owed; a credit pays what is owed first. */
  async #move(trx: Trx, account: string, amount: number, kind: MovementKind, reference: string): Promise<void> {
    if (!Number.isSafeInteger(amount)) throw new Error(`a movement of ${amount} credits is not a safe integer`);
    const current = await this.#accountRow(trx, account);
    let { balance, owed } = current;
    if (amount >= 0) {
      const repaid = Math.min(owed, amount);
      owed -= repaid;
      balance += amount - repaid;
    } else {
      const taken = Math.min(balance, -amount);
      balance -= taken;
      owed += -amount - taken;
    }
    await trx
      .insertInto("credit_accounts")
      .values({ account, balance, owed })
      .onConflict((conflict) => conflict.column("account").doUpdateSet({ balance, owed }))
      .execute();
    await trx.insertInto("credit_movements").values({ id: null, account, kind, amount, reference, created_at: this.#iso() }).execute();
  }

  #iso(): string {
    return this.#now().toISOString();
  }
}

function voucherRow(row: CreditsSchema["vouchers"]): VoucherRow {
  return {
    voucherId: row.voucher_id,
    requestId: row.request_id,
    account: row.account,
    recipient: row.recipient,
    itemId: row.item_id,
    quantity: row.quantity,
    amount: row.amount,
    price: row.price,
    expiry: row.expiry,
    issuer: row.issuer,
    signature: row.signature,
    status: row.status,
  };
}
