import Database from 'better-sqlite3';
import { InvalidArgumentError, StaleFenceError } from '../errors.js';
import {
  assertFencedWrite,
  assertSameFence,
  type FencedRecord,
  type FencedResource,
  type FencedResourceOptions,
} from '../fenced-resource.js';
import { assertResource } from '../validate.js';

/** How values are stored in the TEXT column. Default: JSON. */
export interface SqliteValueCodec<V> {
  encode(value: V): string;
  decode(text: string): V;
}

export interface SqliteFencedResourceOptions<V> extends FencedResourceOptions {
  /** A file path (opened, and closed by `close()`), or an open better-sqlite3 database (left open). */
  database: string | Database.Database;
  /** Table holding key, value and fence; created if missing. Default "fenced_values". */
  table?: string;
  codec?: SqliteValueCodec<V>;
}

const JSON_CODEC: SqliteValueCodec<never> = {
  encode: (value) => JSON.stringify(value),
  decode: (text) => JSON.parse(text) as never,
};

interface Row {
  value: string;
  fence: bigint;
}

/**
 * A `FencedResource` on SQLite. The fence check and the write are one statement,
 * `UPDATE … SET value = ?, fence = ? WHERE key = ? AND fence < ?`, run inside an IMMEDIATE
 * transaction together with the first-write insert, so processes sharing the file cannot interleave
 * between checking a fence and writing. Fences are stored as 64-bit integers and read back as bigint.
 */
export class SqliteFencedResource<V> implements FencedResource<V> {
  readonly table: string;
  readonly #db: Database.Database;
  readonly #ownsDatabase: boolean;
  readonly #codec: SqliteValueCodec<V>;
  readonly #write: (key: string, text: string, fence: bigint) => void;
  readonly #read: Database.Statement<[string], Row>;

  constructor(options: SqliteFencedResourceOptions<V>) {
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('options', options, 'an object with database');
    }
    assertSameFence(options.sameFence);
    const table = options.table ?? 'fenced_values';
    if (typeof table !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
      throw new InvalidArgumentError('table', table, 'an SQL identifier (letters, digits, underscore)');
    }
    this.table = table;
    this.#codec = options.codec ?? (JSON_CODEC as SqliteValueCodec<V>);
    if (typeof options.database === 'string') {
      this.#db = new Database(options.database);
      this.#ownsDatabase = true;
      // WAL lets readers in other processes proceed while one writer holds the write lock.
      this.#db.pragma('journal_mode = WAL');
      this.#db.pragma('busy_timeout = 5000');
    } else if (options.database instanceof Database) {
      this.#db = options.database;
      this.#ownsDatabase = false;
    } else {
      throw new InvalidArgumentError(
        'database',
        options.database,
        'a file path or a better-sqlite3 Database',
      );
    }
    this.#db.exec(
      `CREATE TABLE IF NOT EXISTS "${table}" (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, fence INTEGER NOT NULL)`,
    );
    const comparison = options.sameFence === 'accept' ? '<=' : '<';
    const update = this.#db.prepare<[string, bigint, string, bigint]>(
      `UPDATE "${table}" SET value = ?, fence = ? WHERE key = ? AND fence ${comparison} ?`,
    );
    const insert = this.#db.prepare<[string, string, bigint]>(
      `INSERT OR IGNORE INTO "${table}" (key, value, fence) VALUES (?, ?, ?)`,
    );
    const highest = this.#db.prepare<[string], { fence: bigint }>(
      `SELECT fence FROM "${table}" WHERE key = ?`,
    );
    highest.safeIntegers(true);
    this.#read = this.#db.prepare<[string], Row>(`SELECT value, fence FROM "${table}" WHERE key = ?`);
    this.#read.safeIntegers(true);
    const guarded = this.#db.transaction((key: string, text: string, fence: bigint) => {
      if (update.run(text, fence, key, fence).changes === 1) return;
      if (insert.run(key, text, fence).changes === 1) return;
      throw new StaleFenceError(key, fence, highest.get(key)?.fence);
    });
    this.#write = (key, text, fence) => guarded.immediate(key, text, fence);
  }

  async write(key: string, value: V, fence: bigint): Promise<void> {
    assertFencedWrite(key, fence);
    if (fence > 0x7fff_ffff_ffff_ffffn) {
      throw new InvalidArgumentError('fence', fence, 'at most 2^63 − 1 (SQLite INTEGER)');
    }
    this.#write(key, this.#codec.encode(value), fence);
  }

  async read(key: string): Promise<FencedRecord<V> | undefined> {
    assertResource(key);
    const row = this.#read.get(key);
    return row ? { value: this.#codec.decode(row.value), fence: row.fence } : undefined;
  }

  /** Closes the database if this resource opened it. */
  close(): void {
    if (this.#ownsDatabase && this.#db.open) this.#db.close();
  }
}
