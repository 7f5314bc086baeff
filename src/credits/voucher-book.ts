import type { CreditsDatabase, CreditsSchema, MovementKind, VoucherStatus } from "./database.ts";
import { CreditsError } from "./errors.ts";
import { accountRow, moveCredits, type Trx } from "./movements.ts";

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
 * The redemption side of the ledger: credits spent on vouchers once per request id, never beyond the
 * balance or the claim platform's stock, and given back when a voucher expires unclaimed.
 */
export class VoucherBook {
  readonly #db: CreditsDatabase;
  readonly #now: () => Date;

  constructor(db: CreditsDatabase, now: () => Date) {
    this.#db = db;
    this.#now = now;
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
      const { balance } = await accountRow(trx, input.account);
      if (balance < input.price)
        throw new CreditsError(402, `Not enough credits: the item costs ${input.price}, the account holds ${balance}`);
      if (input.stock !== undefined) {
        const promised = await trx
          .selectFrom("vouchers")
          .select("amount")
          .where("pool", "=", input.stock.pool)
          .where("status", "=", "issued")
          .execute();
        const outstanding = promised.reduce((sum, row) => sum + BigInt(row.amount), 0n);
        if (outstanding + input.amount > input.stock.available)
          throw new CreditsError(409, "Out of stock: the claim platform holds no more of this item than vouchers already promise");
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
    const same =
      earlier.account === terms.account &&
      earlier.item_id === terms.itemId &&
      earlier.quantity === terms.quantity &&
      earlier.recipient === terms.recipient;
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
  async settle(account: string, chain: ClaimsReader): Promise<void> {
    const issued = await this.#db
      .selectFrom("vouchers")
      .selectAll()
      .where("account", "=", account)
      .where("status", "=", "issued")
      .execute();
    if (issued.length === 0) return;
    const point = await chain.settlementPoint();
    // Asked together: the JSON-RPC provider sends them as one batch.
    const claimed = await Promise.all(issued.map((voucher) => chain.isClaimed(voucher.voucher_id, point.blockNumber)));
    for (const [index, voucher] of issued.entries()) {
      if (claimed[index]) {
        await this.#db.updateTable("vouchers").set({ status: "claimed" }).where("voucher_id", "=", voucher.voucher_id).execute();
      } else if (point.timestamp > voucher.expiry + EXPIRY_SETTLE_MARGIN_SECONDS) {
        await this.#db.transaction().execute(async (trx) => {
          const still = await trx
            .selectFrom("vouchers")
            .select("status")
            .where("voucher_id", "=", voucher.voucher_id)
            .executeTakeFirstOrThrow();
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

  /** `account`'s vouchers, oldest first. */
  async of(account: string): Promise<VoucherRow[]> {
    return (await this.#db.selectFrom("vouchers").selectAll().where("account", "=", account).orderBy("created_at").execute()).map(
      voucherRow,
    );
  }

  async #move(trx: Trx, account: string, amount: number, kind: MovementKind, reference: string): Promise<void> {
    await moveCredits(trx, account, amount, kind, reference, this.#iso());
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
