import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

/**
 * A service's journal on disk (SQLite, `node:sqlite`): written through with `synchronous = FULL`, so that what a
 * call journaled survives a crash right after it; a `meta` table of named values; transactions; and the anchor, the
 * deployment the journal belongs to, whose change clears it. The circuit node's and the solver's journals are
 * built on it.
 */
export class JournalDatabase {
  readonly db: DatabaseSync;
  readonly #tables: readonly string[];

  /**
   * Opens (or creates) `file` (`:memory:` for none) with `schema`, the service's `CREATE TABLE IF NOT EXISTS`
   * statements besides `meta`; `tables` are those the anchor's change clears.
   */
  constructor(file: string, schema: string, tables: readonly string[]) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    this.db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = FULL;
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      ${schema}
    `);
    this.#tables = tables;
  }

  /** Clears the journal when it belongs to another deployment (another chain, contract…); returns whether it did. */
  anchor(anchor: string): boolean {
    const current = this.meta("anchor");
    if (current === anchor) return false;
    this.transaction(() => {
      for (const table of [...this.#tables, "meta"]) this.db.exec(`DELETE FROM ${table};`);
      this.setMeta("anchor", anchor);
    });
    return current !== undefined;
  }

  meta(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  /** Runs `work` in one transaction: all of it is journaled, or none. */
  transaction<T>(work: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  close(): void {
    this.db.close();
  }
}
