import type { DatabaseSync } from "node:sqlite";

import { JournalDatabase } from "../common/journal-database.ts";

export type TxStatus = "pending" | "mined" | "reverted" | "dropped";

export interface StoredTx {
  id: number;
  nonce: number;
  kind: string;
  /** The latest signed version (a fee bump re-signs the same nonce). */
  raw: string;
  /** Every hash this nonce was sent under, oldest first: any of them may be the one mined. */
  hashes: string[];
}

/** The reveal a commitment waits for: sent once its commit transaction is mined. */
export interface PendingReveal {
  commitTxId: number;
  /** The whole `revealResults` calldata. */
  data: string;
  /** Gas added to the reveal's estimate in case it finalizes jobs. */
  extraGas: bigint;
  /** The Ethereum blocks its answers were read at, with their hashes then: still canonical, or it is withdrawn. */
  sourceBlocks: SourceBlock[];
}

/** An Ethereum block an answer was read at, as it was then. */
export interface SourceBlock {
  number: bigint;
  hash: string;
}

/** What a commit journals besides its votes: the reveal that will cast them, and the blocks its answers read. */
export interface JournaledReveal {
  data: string;
  extraGas: bigint;
  sourceBlocks?: readonly SourceBlock[];
}

export interface VoteIntent {
  jobId: bigint;
  licenseId: bigint;
  /** The L2 block the job was requested in (a dropped transaction rewinds the scan to it). */
  jobBlock: number;
}

/**
 * The node's journal in its cache directory (SQLite, `node:sqlite`): the last L2 block whose jobs are all
 * handled, every transaction it signed, and every (job, license) vote it sent. A vote is written in the
 * same SQLite transaction as the signed transaction that carries it, before that is broadcast, so a crash
 * at any point can neither lose a sent vote nor send one twice: on restart, a pending transaction is
 * looked up by its hashes and sent again as signed, never re-created.
 *
 * Votes cast by commit–reveal are journaled with the commit transaction, with the reveal that will cast
 * them (its calldata), so a restart between the two still reveals; a reveal that fails forgets its
 * commitment's votes, which are then answered again.
 *
 * The journal is anchored to one chain and registry (`anchor`): a journal from another devnet or another
 * deployment is cleared, since its job ids mean other jobs.
 */
export class NodeStateStore {
  readonly #journal: JournalDatabase;
  readonly #db: DatabaseSync;

  constructor(file: string) {
    this.#journal = new JournalDatabase(
      file,
      `
      CREATE TABLE IF NOT EXISTS txs (
        id INTEGER PRIMARY KEY, nonce INTEGER NOT NULL, kind TEXT NOT NULL, raw TEXT NOT NULL,
        hashes TEXT NOT NULL, status TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS votes (
        job_id TEXT NOT NULL, license_id TEXT NOT NULL, tx_id INTEGER NOT NULL, job_block INTEGER NOT NULL,
        PRIMARY KEY (job_id, license_id)
      );
      CREATE TABLE IF NOT EXISTS reveals (
        commit_tx_id INTEGER PRIMARY KEY, data TEXT NOT NULL, extra_gas TEXT NOT NULL, reveal_tx_id INTEGER
      );
      CREATE TABLE IF NOT EXISTS reveal_sources (
        commit_tx_id INTEGER NOT NULL, block TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (commit_tx_id, block, hash)
      );
    `,
      ["txs", "votes", "reveals", "reveal_sources"],
    );
    this.#db = this.#journal.db;
  }

  /** Clears the journal when it belongs to another chain or registry; returns whether it did. */
  anchor(anchor: string): boolean {
    return this.#journal.anchor(anchor);
  }

  /** The last L2 block whose jobs are all handled, if any. */
  cursor(): number | undefined {
    const value = this.#journal.meta("cursor");
    return value === undefined ? undefined : Number(value);
  }

  setCursor(block: number): void {
    this.#journal.setMeta("cursor", String(block));
  }

  /**
   * Asks the next job pass to scan again from `block` (votes there were lost). Kept apart from the cursor,
   * which a pass in progress may still move forward: the pass that takes it applies it.
   */
  requestRescan(block: number): void {
    const current = this.#journal.meta("rescanFrom");
    if (current === undefined || block < Number(current)) this.#journal.setMeta("rescanFrom", String(block));
  }

  /** The rescan asked for, if any, which is then cleared. */
  takeRescan(): number | undefined {
    return this.#journal.transaction(() => {
      const value = this.#journal.meta("rescanFrom");
      this.#db.prepare("DELETE FROM meta WHERE key = 'rescanFrom'").run();
      return value === undefined ? undefined : Number(value);
    });
  }

  hasVote(jobId: bigint, licenseId: bigint): boolean {
    return this.#db.prepare("SELECT 1 FROM votes WHERE job_id = ? AND license_id = ?").get(String(jobId), String(licenseId)) !== undefined;
  }

  /**
   * Journals a signed transaction and the votes it carries, atomically, before it is broadcast; a commit
   * also journals the reveal that will cast its votes.
   */
  recordTx(tx: { nonce: number; kind: string; raw: string; hash: string }, votes: VoteIntent[] = [], reveal?: JournaledReveal): number {
    return this.#journal.transaction(() => {
      const { lastInsertRowid } = this.#db
        .prepare("INSERT INTO txs (nonce, kind, raw, hashes, status) VALUES (?, ?, ?, ?, 'pending')")
        .run(tx.nonce, tx.kind, tx.raw, JSON.stringify([tx.hash]));
      const id = Number(lastInsertRowid);
      const insertVote = this.#db.prepare("INSERT INTO votes (job_id, license_id, tx_id, job_block) VALUES (?, ?, ?, ?)");
      for (const vote of votes) insertVote.run(String(vote.jobId), String(vote.licenseId), id, vote.jobBlock);
      if (reveal !== undefined)
        this.#db
          .prepare("INSERT INTO reveals (commit_tx_id, data, extra_gas) VALUES (?, ?, ?)")
          .run(id, reveal.data, String(reveal.extraGas));
      const insertSource = this.#db.prepare("INSERT OR IGNORE INTO reveal_sources (commit_tx_id, block, hash) VALUES (?, ?, ?)");
      for (const block of reveal?.sourceBlocks ?? []) insertSource.run(id, String(block.number), block.hash);
      return id;
    });
  }

  /** The reveals whose commit is mined and which were not sent yet, oldest first. */
  readyReveals(): PendingReveal[] {
    const rows = this.#db
      .prepare(
        `SELECT r.commit_tx_id AS id, r.data AS data, r.extra_gas AS extraGas FROM reveals r JOIN txs t ON t.id = r.commit_tx_id
         WHERE r.reveal_tx_id IS NULL AND t.status = 'mined' ORDER BY r.commit_tx_id`,
      )
      .all() as Array<{ id: number; data: string; extraGas: string }>;
    const sources = this.#db.prepare("SELECT block, hash FROM reveal_sources WHERE commit_tx_id = ? ORDER BY block");
    return rows.map((row) => ({
      commitTxId: Number(row.id),
      data: row.data,
      extraGas: BigInt(row.extraGas),
      sourceBlocks: (sources.all(row.id) as Array<{ block: string; hash: string }>).map((source) => ({
        number: BigInt(source.block),
        hash: source.hash,
      })),
    }));
  }

  /**
   * A reveal that must not be sent (a block its answers read was reorged away): it is forgotten with its
   * commitment's votes, so those jobs are answered again; the commitment stays on chain, never revealed.
   * Returns the earliest job block among the votes, to rescan from.
   */
  withdrawReveal(commitTxId: number): number | undefined {
    return this.#journal.transaction(() => {
      const row = this.#db.prepare("SELECT MIN(job_block) AS block FROM votes WHERE tx_id = ?").get(commitTxId) as { block: number | null };
      this.#forgetCommitment(commitTxId);
      return row.block === null ? undefined : Number(row.block);
    });
  }

  /** Records that `revealTxId` reveals the commitment of `commitTxId`. */
  markRevealed(commitTxId: number, revealTxId: number): void {
    this.#db.prepare("UPDATE reveals SET reveal_tx_id = ? WHERE commit_tx_id = ?").run(revealTxId, commitTxId);
  }

  /** A fee bump: the same nonce signed again; the new hash joins the old ones. */
  replaceTx(id: number, raw: string, hash: string): void {
    const row = this.#db.prepare("SELECT hashes FROM txs WHERE id = ?").get(id) as { hashes: string } | undefined;
    if (row === undefined) throw new Error(`no journaled transaction ${id}`);
    const hashes = [...(JSON.parse(row.hashes) as string[]), hash];
    this.#db.prepare("UPDATE txs SET raw = ?, hashes = ? WHERE id = ?").run(raw, JSON.stringify(hashes), id);
  }

  pendingTxs(): StoredTx[] {
    const rows = this.#db.prepare("SELECT id, nonce, kind, raw, hashes FROM txs WHERE status = 'pending' ORDER BY nonce").all() as Array<
      Omit<StoredTx, "hashes"> & { hashes: string }
    >;
    return rows.map((row) => ({
      id: Number(row.id),
      nonce: Number(row.nonce),
      kind: row.kind,
      raw: row.raw,
      hashes: JSON.parse(row.hashes) as string[],
    }));
  }

  /** The highest nonce journaled, if any (the next transaction must not reuse it). */
  highestNonce(): number | undefined {
    const row = this.#db.prepare("SELECT MAX(nonce) AS nonce FROM txs WHERE status != 'dropped'").get() as { nonce: number | null };
    return row.nonce === null ? undefined : Number(row.nonce);
  }

  markTx(id: number, status: "mined"): void {
    this.#db.prepare("UPDATE txs SET status = ? WHERE id = ?").run(status, id);
  }

  /**
   * A transaction whose votes were not cast: dropped (its nonce was used by another) or reverted. Its votes
   * are forgotten, so they may be sent again. Returns the earliest job block among them, to rescan from.
   */
  forgetTx(id: number, status: "dropped" | "reverted"): number | undefined {
    return this.#journal.transaction(() => {
      // A failed reveal leaves its commitment's votes uncast; a failed commit, its votes and its reveal.
      const votesTx = this.#votesTxOf(id);
      const row = this.#db.prepare("SELECT MIN(job_block) AS block FROM votes WHERE tx_id = ?").get(votesTx) as { block: number | null };
      this.#forgetCommitment(votesTx);
      this.#db.prepare("UPDATE txs SET status = ? WHERE id = ?").run(status, id);
      return row.block === null ? undefined : Number(row.block);
    });
  }

  /**
   * The votes of mined transaction `id` on `jobIds`, which the registry skipped: forgotten, so those jobs
   * are answered again. Returns the earliest job block among them, to rescan from.
   */
  forgetSkippedVotes(id: number, jobIds: bigint[]): number | undefined {
    return this.#journal.transaction(() => {
      id = this.#votesTxOf(id);
      let earliest: number | undefined;
      for (const jobId of jobIds) {
        const row = this.#db.prepare("SELECT MIN(job_block) AS block FROM votes WHERE tx_id = ? AND job_id = ?").get(id, String(jobId)) as {
          block: number | null;
        };
        if (row.block !== null) earliest = Math.min(earliest ?? row.block, Number(row.block));
        this.#db.prepare("DELETE FROM votes WHERE tx_id = ? AND job_id = ?").run(id, String(jobId));
      }
      return earliest;
    });
  }

  /** Votes journaled for `jobId` (tests and diagnostics). */
  votesFor(jobId: bigint): bigint[] {
    const rows = this.#db.prepare("SELECT license_id FROM votes WHERE job_id = ? ORDER BY license_id").all(String(jobId)) as Array<{
      license_id: string;
    }>;
    return rows.map((row) => BigInt(row.license_id));
  }

  close(): void {
    this.#journal.close();
  }

  /** Forgets the votes transaction `id` carries (or commits to), and its reveal. */
  #forgetCommitment(id: number): void {
    this.#db.prepare("DELETE FROM votes WHERE tx_id = ?").run(id);
    this.#db.prepare("DELETE FROM reveals WHERE commit_tx_id = ?").run(id);
    this.#db.prepare("DELETE FROM reveal_sources WHERE commit_tx_id = ?").run(id);
  }

  /** The transaction whose votes `id` casts: its commit's, for a reveal; its own otherwise. */
  #votesTxOf(id: number): number {
    const row = this.#db.prepare("SELECT commit_tx_id AS commitId FROM reveals WHERE reveal_tx_id = ?").get(id) as
      { commitId: number } | undefined;
    return row === undefined ? id : Number(row.commitId);
  }
}
