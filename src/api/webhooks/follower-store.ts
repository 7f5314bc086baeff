import { AvnError } from "@avn/protocol/errors";
import { randomUUID } from "node:crypto";

import type { Kysely } from "kysely";

import type { KeyDatabaseSchema } from "../keys/database/schema.ts";
import type { PairState } from "./watch-index.ts";

type Db = Kysely<KeyDatabaseSchema>;

/** Where a chain's follower stands: the last block or slot recorded, with the recent hashes and the revision it watched. */
export interface FollowerCursor {
  block: bigint;
  /** [number, hash] of the latest blocks, oldest first, the cursor's last. */
  recent: Array<[bigint, string]>;
  revision: bigint;
}

/** A change recorded for one subscription. */
export interface RecordedChange {
  subscriptionId: string;
  payload: string;
  observedAt: string;
  id: string;
}

/** Another process leads the followers now: this one's block was not recorded. */
export class LeadershipLostError extends AvnError<"WEBHOOK_LEADERSHIP_LOST"> {
  constructor() {
    super("WEBHOOK_LEADERSHIP_LOST", "another API process follows the chains now");
    this.name = "LeadershipLostError";
  }
}

/** `evt_` and 128 random bits: the delivery id the receiver deduplicates with. */
export const newDeliveryId = () => `evt_${randomUUID().replaceAll("-", "")}`;

/**
 * What the chain followers keep in the key database: which process leads them (a lease that the leader renews
 * in every write, so that a process that lost it cannot record a block), each chain's cursor, the pairs' last
 * balances, and the changes they record, all in one transaction per block.
 */
export class FollowerStore {
  readonly #db: Db;
  #leading: Promise<{ epoch: bigint } | undefined> | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Renews the lead of `owner`, or takes it when nobody holds it (resigned, or its lease ran out), until
   * `nowMs + leaseMs`. Returns the lead's epoch, which each takeover raises (a process leading again after
   * another did sees a new one, and reloads), or undefined when another process holds it. The row's owner stays
   * `owner` only while nobody else took it: a process that paused past its lease renews it only if no other
   * process recorded anything meanwhile.
   */
  lead(owner: string, leaseMs: number, nowMs = Date.now()): Promise<{ epoch: bigint } | undefined> {
    // The followers of one process ask at once when they start: one answer for both, or the second one's takeover
    // would find the lead just taken by the first and be refused.
    this.#leading ??= this.#lead(owner, leaseMs, nowMs).finally(() => (this.#leading = undefined));
    return this.#leading;
  }

  async #lead(owner: string, leaseMs: number, nowMs: number): Promise<{ epoch: bigint } | undefined> {
    const renewed = await this.#db
      .updateTable("webhook_state")
      .set({ until_ms: nowMs + leaseMs })
      .where("name", "=", "leader")
      .where("owner", "=", owner)
      .returning("revision")
      .executeTakeFirst();
    if (renewed !== undefined) return { epoch: BigInt(renewed.revision) };
    const taken = await this.#db
      .updateTable("webhook_state")
      .set((eb) => ({ owner, until_ms: nowMs + leaseMs, revision: eb("revision", "+", 1) }))
      .where("name", "=", "leader")
      .where((eb) => eb.or([eb("owner", "is", null), eb("until_ms", "<", nowMs)]))
      .returning("revision")
      .executeTakeFirst();
    return taken === undefined ? undefined : { epoch: BigInt(taken.revision) };
  }

  /** Gives the lead up (a clean stop), so another process takes it at once. */
  async resign(owner: string): Promise<void> {
    await this.#db
      .updateTable("webhook_state")
      .set({ owner: null, until_ms: 0 })
      .where("name", "=", "leader")
      .where("owner", "=", owner)
      .execute();
  }

  async cursor(chain: string): Promise<FollowerCursor | undefined> {
    const row = await this.#db.selectFrom("webhook_cursors").selectAll().where("chain", "=", chain).executeTakeFirst();
    if (row === undefined) return undefined;
    const recent = (JSON.parse(row.recent) as Array<[string, string]>).map(([block, hash]): [bigint, string] => [BigInt(block), hash]);
    return { block: BigInt(row.block), recent, revision: BigInt(row.revision) };
  }

  async pairs(chain: string): Promise<PairState[]> {
    const rows = await this.#db.selectFrom("webhook_pairs").selectAll().where("chain", "=", chain).execute();
    return rows.map((row) => ({
      owner: row.owner,
      asset: row.asset,
      tokenId: row.token_id,
      balance: BigInt(row.balance),
      block: BigInt(row.block),
    }));
  }

  /**
   * Records a block: the changes found in it, the pairs' new balances and the cursor, at once, if `owner` still
   * leads in the epoch it loaded under (else LeadershipLostError, and nothing is written). A crash before the commit records nothing, and
   * the block is followed again.
   */
  async record(
    chain: string,
    owner: string,
    epoch: bigint | undefined,
    leaseMs: number,
    update: { cursor: FollowerCursor; pairs: readonly PairState[]; changes: readonly RecordedChange[] },
    nowMs = Date.now(),
  ): Promise<void> {
    await this.#db.transaction().execute(async (transaction) => {
      // First, so the leader row stays locked until the commit: a process taking the lead waits for it.
      const renewed = await transaction
        .updateTable("webhook_state")
        .set({ until_ms: nowMs + leaseMs })
        .where("name", "=", "leader")
        .where("owner", "=", owner)
        .where("revision", "=", (epoch ?? -1n).toString())
        .executeTakeFirst();
      if (renewed.numUpdatedRows === 0n) throw new LeadershipLostError();
      for (let start = 0; start < update.pairs.length; start += 100) {
        await transaction
          .insertInto("webhook_pairs")
          .values(
            update.pairs.slice(start, start + 100).map((pair) => ({
              chain,
              owner: pair.owner,
              asset: pair.asset,
              token_id: pair.tokenId,
              balance: pair.balance.toString(),
              block: pair.block.toString(),
            })),
          )
          .onConflict((conflict) =>
            conflict.columns(["chain", "owner", "asset", "token_id"]).doUpdateSet((eb) => ({
              balance: eb.ref("excluded.balance"),
              block: eb.ref("excluded.block"),
            })),
          )
          .execute();
      }
      for (let start = 0; start < update.changes.length; start += 100) {
        await transaction
          .insertInto("webhook_events")
          .values(
            update.changes.slice(start, start + 100).map((change) => ({
              id: change.id,
              subscription_id: change.subscriptionId,
              payload: change.payload,
              observed_at: change.observedAt,
              state: "pending",
              attempts: 0,
              next_attempt_ms: nowMs,
              first_attempt_ms: null,
              lease_owner: null,
              lease_until_ms: null,
            })),
          )
          .execute();
      }
      const cursor = {
        chain,
        block: update.cursor.block.toString(),
        revision: update.cursor.revision.toString(),
        recent: JSON.stringify(update.cursor.recent.map(([block, hash]) => [block.toString(), hash])),
      };
      await transaction
        .insertInto("webhook_cursors")
        .values(cursor)
        .onConflict((conflict) =>
          conflict.column("chain").doUpdateSet({ block: cursor.block, revision: cursor.revision, recent: cursor.recent }),
        )
        .execute();
    });
  }
}
