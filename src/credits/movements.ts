import type { Transaction } from "kysely";

import type { CreditsSchema, MovementKind } from "./database.ts";

/** A transaction on the credits ledger: every change of an account happens inside one. */
export type Trx = Transaction<CreditsSchema>;

/** An account's balance and debt (zero and zero for an account never seen). */
export async function accountRow(trx: Trx, account: string): Promise<{ balance: number; owed: number }> {
  return (
    (await trx.selectFrom("credit_accounts").select(["balance", "owed"]).where("account", "=", account).executeTakeFirst()) ?? {
      balance: 0,
      owed: 0,
    }
  );
}

/** Adds `amount` (negative: takes) to `account`: a debit beyond the balance becomes owed; a credit pays what is owed first. */
export async function moveCredits(
  trx: Trx,
  account: string,
  amount: number,
  kind: MovementKind,
  reference: string,
  at: string,
): Promise<void> {
  if (!Number.isSafeInteger(amount)) throw new Error(`a movement of ${amount} credits is not a safe integer`);
  const current = await accountRow(trx, account);
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
  await trx.insertInto("credit_movements").values({ id: null, account, kind, amount, reference, created_at: at }).execute();
}
