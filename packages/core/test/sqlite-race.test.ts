import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SqliteFencedResource } from '@fencekit/core/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const racer = fileURLToPath(new URL('./support/sqlite-racer.mjs', import.meta.url));
const built = fileURLToPath(new URL('../dist/sqlite/index.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fencekit-core-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteFencedResource across processes', () => {
  it('never lets a lower fence overwrite a higher one while 4 processes race', async () => {
    expect(existsSync(built), 'build @fencekit/core first (npx tsc -b packages/core)').toBe(true);
    const file = join(dir, 'race.db');
    new SqliteFencedResource({ database: file, table: 'race' }).close();
    // Audit every change the guard let through, from inside SQLite itself.
    const db = new Database(file);
    db.exec(`CREATE TABLE audit (old_fence INTEGER, new_fence INTEGER NOT NULL);
      CREATE TRIGGER race_insert AFTER INSERT ON race BEGIN INSERT INTO audit VALUES (NULL, new.fence); END;
      CREATE TRIGGER race_update AFTER UPDATE ON race BEGIN INSERT INTO audit VALUES (old.fence, new.fence); END;`);
    const workers = 4;
    const rounds = 300;
    const startAt = String(Date.now() + 2_000);
    const outputs = await Promise.all(
      Array.from({ length: workers }, (_, worker) =>
        run(process.execPath, [racer, file, String(worker), String(workers), String(rounds), startAt], {
          timeout: 60_000,
        }),
      ),
    );
    const counts = outputs.map((o) => JSON.parse(o.stdout) as { accepted: number; refused: number });
    const accepted = counts.reduce((sum, c) => sum + c.accepted, 0);
    const refused = counts.reduce((sum, c) => sum + c.refused, 0);
    expect(accepted + refused).toBe(workers * rounds);

    const audit = db.prepare('SELECT old_fence AS old, new_fence AS new FROM audit ORDER BY rowid').all() as {
      old: number | null;
      new: number;
    }[];
    expect(audit).toHaveLength(accepted);
    expect(audit.filter((row) => row.old !== null && row.new <= row.old)).toEqual([]);
    const final = db.prepare('SELECT value, fence FROM race WHERE key = ?').get('k') as {
      value: string;
      fence: number;
    };
    expect(final.fence).toBe(workers * rounds);
    expect(JSON.parse(final.value)).toBe(final.fence);
    db.close();
  });
});
