import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

import { connectDatabase, type DatabaseConnection } from "../common/database.ts";

/**
 * The credits ledger's tables. Credits are whole numbers (in SQLite's 64-bit integers; the ledger keeps
 * them below 2^53, so JavaScript numbers hold them exactly); times are ISO-8601 UTC text, and expiries
 * Unix seconds.
 */
export interface CreditsSchema {
  /** What an account holds now: `balance - owed` is the sum of its movements, and one of the two is 0. */
  credit_accounts: { account: string; balance: number; owed: number };
  /** Every change of every account, signed (a purchase adds, a refund or a redemption takes). */
  credit_movements: {
    id: number | null;
    account: string;
    kind: MovementKind;
    amount: number;
    /** What caused it (a payment, a Stripe event, a voucher): one movement per kind and reference. */
    reference: string;
    created_at: string;
  };
  /** Each Stripe event handled, by its id: a replay finds it here and changes nothing. */
  stripe_events: { event_id: string; type: string; outcome: string; received_at: string };
  /**
   * One row per paid checkout, by payment intent: the credits it gave (`purchased`) and took back from the
   * account (`taken`); and Stripe's amounts at the rate (minor units × credits per minor unit): what the
   * buyer was charged, tax and shipping included (`charged`), the refunded total (Stripe's running total)
   * and what open or lost disputes hold. A refund or a dispute may arrive before the purchase it belongs to
   * (Stripe does not order its events): its row then waits without an account (and `charged` null).
   */
  payments: {
    payment_intent: string;
    checkout_session: string | null;
    account: string | null;
    purchased: number;
    /** Null until the purchase arrives; rows from before migration 0002 hold `purchased` (taken back one for one). */
    charged: number | null;
    refunded: number;
    disputed: number;
    taken: number;
    /** Set when a paid checkout named no valid claim account or another currency: the operator settles it. */
    problem: string | null;
    created_at: string;
  };
  /** Each dispute of a payment: its amount at the rate (as `payments.disputed`) and how it ended. */
  disputes: {
    dispute_id: string;
    payment_intent: string;
    credits: number;
    status: "open" | "won" | "lost";
  };
  vouchers: {
    voucher_id: string;
    request_id: string;
    account: string;
    recipient: string;
    item_id: number;
    quantity: number;
    /** The voucher's amount (base units or a count): decimal text, as it may exceed 2^53. */
    amount: string;
    /** The token whose stock the claim spends (lower case), or null for an item the asset mints. */
    pool: string | null;
    price: number;
    expiry: number;
    issuer: string;
    signature: string;
    /** Where the voucher can be claimed: the claim contract and its chain. */
    claims_contract: string;
    chain_id: string;
    status: VoucherStatus;
    created_at: string;
  };
}

export type MovementKind = "purchase" | "refund" | "dispute" | "dispute_won" | "redemption" | "voucher_expired";
export type VoucherStatus = "issued" | "claimed" | "expired";

export type CreditsDatabase = Kysely<CreditsSchema>;

/** The schema, in order; never edit a migration that has shipped: add one. */
export function creditsMigrations(): Record<string, Migration> {
  // STRICT makes SQLite refuse a value of the wrong type instead of storing it anyway.
  const strict = sql`strict`;
  return {
    "0001_credits_ledger": {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable("credit_accounts")
          .addColumn("account", "text", (column) => column.primaryKey())
          .addColumn("balance", "integer", (column) => column.notNull().check(sql`balance >= 0`))
          .addColumn("owed", "integer", (column) => column.notNull().check(sql`owed >= 0`))
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createTable("credit_movements")
          .addColumn("id", "integer", (column) => column.primaryKey().autoIncrement())
          .addColumn("account", "text", (column) => column.notNull())
          .addColumn("kind", "text", (column) => column.notNull())
          .addColumn("amount", "integer", (column) => column.notNull())
          .addColumn("reference", "text", (column) => column.notNull())
          .addColumn("created_at", "text", (column) => column.notNull())
          .addUniqueConstraint("credit_movements_once", ["kind", "reference", "account"])
          .modifyEnd(strict)
          .execute();
        await db.schema.createIndex("credit_movements_account").on("credit_movements").columns(["account", "id"]).execute();
        await db.schema
          .createTable("stripe_events")
          .addColumn("event_id", "text", (column) => column.primaryKey())
          .addColumn("type", "text", (column) => column.notNull())
          .addColumn("outcome", "text", (column) => column.notNull())
          .addColumn("received_at", "text", (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createTable("payments")
          .addColumn("payment_intent", "text", (column) => column.primaryKey())
          .addColumn("checkout_session", "text")
          .addColumn("account", "text")
          .addColumn("purchased", "integer", (column) => column.notNull())
          .addColumn("refunded", "integer", (column) => column.notNull())
          .addColumn("disputed", "integer", (column) => column.notNull())
          .addColumn("taken", "integer", (column) => column.notNull())
          .addColumn("problem", "text")
          .addColumn("created_at", "text", (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createTable("disputes")
          .addColumn("dispute_id", "text", (column) => column.primaryKey())
          .addColumn("payment_intent", "text", (column) => column.notNull())
          .addColumn("credits", "integer", (column) => column.notNull())
          .addColumn("status", "text", (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        await db.schema
          .createTable("vouchers")
          .addColumn("voucher_id", "text", (column) => column.primaryKey())
          .addColumn("request_id", "text", (column) => column.notNull().unique())
          .addColumn("account", "text", (column) => column.notNull())
          .addColumn("recipient", "text", (column) => column.notNull())
          .addColumn("item_id", "integer", (column) => column.notNull())
          .addColumn("quantity", "integer", (column) => column.notNull())
          .addColumn("amount", "text", (column) => column.notNull())
          .addColumn("pool", "text")
          .addColumn("price", "integer", (column) => column.notNull())
          .addColumn("expiry", "integer", (column) => column.notNull())
          .addColumn("issuer", "text", (column) => column.notNull())
          .addColumn("signature", "text", (column) => column.notNull())
          .addColumn("claims_contract", "text", (column) => column.notNull())
          .addColumn("chain_id", "text", (column) => column.notNull())
          .addColumn("status", "text", (column) => column.notNull())
          .addColumn("created_at", "text", (column) => column.notNull())
          .modifyEnd(strict)
          .execute();
        await db.schema.createIndex("vouchers_account").on("vouchers").columns(["account", "status"]).execute();
        await db.schema.createIndex("vouchers_pool").on("vouchers").columns(["pool", "status"]).execute();
      },
    },
    "0002_payments_charged": {
      // What the buyer was charged, so that refunds and disputes take credits back in proportion. Payments
      // recorded before it keep the rule they were credited under (a credit back per credit's worth refunded).
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable("payments").addColumn("charged", "integer").execute();
        await sql`update payments set charged = purchased where checkout_session is not null`.execute(db);
      },
    },
  };
}

/**
 * Opens (and migrates) the credits ledger: a SQLite file. One credits service process owns it; the
 * ledger's transactions rely on SQLite serializing writers.
 */
export function connectCreditsDatabase(file: string): Promise<DatabaseConnection<CreditsSchema>> {
  if (/^postgres(?:ql)?:\/\//i.test(file)) throw new Error("the credits ledger is a SQLite file (CREDITS_DB), not a PostgreSQL server");
  return connectDatabase<CreditsSchema>(file, "credits database", creditsMigrations);
}
