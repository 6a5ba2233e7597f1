import Database from 'better-sqlite3';

/**
 * The protected resource's state, in SQLite so the fence check is the real thing a service would do:
 * one `UPDATE … WHERE fence < ?` whose change count says whether the write was accepted. Fences are
 * bound as 64-bit integers (etcd revisions and ZooKeeper zxids fit; JSON numbers would not).
 */
export class ResourceStore {
  readonly #db: Database.Database;
  readonly #fencing: boolean;
  readonly #statements;

  constructor(path: string, initialStock: number, fencing: boolean) {
    this.#fencing = fencing;
    this.#db = new Database(path);
    this.#db.defaultSafeIntegers(true);
    this.#db.pragma('journal_mode = MEMORY');
    this.#db.pragma('synchronous = OFF');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS inventory (id INTEGER PRIMARY KEY, stock INTEGER NOT NULL,
        version INTEGER NOT NULL, fence INTEGER);
      CREATE TABLE IF NOT EXISTS guard (name TEXT PRIMARY KEY, fence INTEGER);
    `);
    this.#db.prepare('INSERT OR REPLACE INTO inventory VALUES (1, ?, 0, NULL)').run(BigInt(initialStock));
    this.#statements = {
      read: this.#db.prepare('SELECT stock, version FROM inventory WHERE id = 1'),
      // A fenced write must carry a fence strictly above every fence already accepted.
      writeFenced: this.#db.prepare(
        'UPDATE inventory SET stock = ?, version = version + 1, fence = ? WHERE id = 1 AND (fence IS NULL OR fence < ?)',
      ),
      writeBlind: this.#db.prepare(
        'UPDATE inventory SET stock = ?, version = version + 1, fence = coalesce(?, fence) WHERE id = 1',
      ),
      cas: this.#db.prepare(
        'UPDATE inventory SET stock = ?, version = version + 1 WHERE id = 1 AND version = ?',
      ),
      guardInit: this.#db.prepare('INSERT OR IGNORE INTO guard VALUES (?, NULL)'),
      // Strict for entries (one per grant); claims pass `orEqual` since a leader claims many times per term.
      guardStrict: this.#db.prepare(
        'UPDATE guard SET fence = ? WHERE name = ? AND (fence IS NULL OR fence < ?)',
      ),
      guardOrEqual: this.#db.prepare(
        'UPDATE guard SET fence = ? WHERE name = ? AND (fence IS NULL OR fence <= ?)',
      ),
    };
  }

  /** Whether stale fences are refused in this run. */
  get fencing(): boolean {
    return this.#fencing;
  }

  read(): { stock: number; version: number } {
    const row = this.#statements.read.get() as { stock: bigint; version: bigint };
    return { stock: Number(row.stock), version: Number(row.version) };
  }

  /** Writes `stock`; with fencing on, only when `fence` is above every accepted fence. */
  write(stock: number, fence: bigint | undefined): boolean {
    if (this.#fencing && fence !== undefined) {
      return this.#statements.writeFenced.run(BigInt(stock), fence, fence).changes === 1;
    }
    return this.#statements.writeBlind.run(BigInt(stock), fence ?? null).changes === 1;
  }

  /** Optimistic write for the lock-free baseline: succeeds only if nobody wrote since `version`. */
  compareAndSet(stock: number, version: number): boolean {
    return this.#statements.cas.run(BigInt(stock), BigInt(version)).changes === 1;
  }

  /** Admits `fence` past the named guard (critical section, leadership claims) when fencing is on. */
  admit(name: string, fence: bigint | undefined, orEqual: boolean): boolean {
    if (!this.#fencing || fence === undefined) return true;
    this.#statements.guardInit.run(name);
    const statement = orEqual ? this.#statements.guardOrEqual : this.#statements.guardStrict;
    return statement.run(fence, name, fence).changes === 1;
  }

  close(): void {
    this.#db.close();
  }
}
