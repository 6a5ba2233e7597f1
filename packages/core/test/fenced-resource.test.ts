import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FencedResource, isFencekitError, MemoryFencedResource, StaleFenceError } from '@fencekit/core';
import { SqliteFencedResource } from '@fencekit/core/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'fencekit-core-sqlite-'));
const opened: SqliteFencedResource<unknown>[] = [];
afterAll(() => {
  for (const resource of opened) resource.close();
  rmSync(dir, { recursive: true, force: true });
});

function sqlite<V>(file: string, options: { sameFence?: 'accept' | 'refuse'; table?: string } = {}) {
  const resource = new SqliteFencedResource<V>({ database: join(dir, file), ...options });
  opened.push(resource as SqliteFencedResource<unknown>);
  return resource;
}

const kinds: [string, (file: string) => FencedResource<{ stock: number }>][] = [
  ['memory', () => new MemoryFencedResource()],
  ['sqlite', (file) => sqlite(file)],
];

describe.each(kinds)('%s fenced resource', (_kind, create) => {
  it('accepts increasing fences and refuses a stale or repeated one with StaleFenceError', async () => {
    const store = create('basic.db');
    await store.write('sku-42', { stock: 5 }, 1n);
    await store.write('sku-42', { stock: 4 }, 3n);
    const stale = await store.write('sku-42', { stock: 99 }, 2n).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(StaleFenceError);
    expect(stale).toMatchObject({ code: 'stale-fence', fence: 2n, highestSeen: 3n, resource: 'sku-42' });
    await expect(store.write('sku-42', { stock: 98 }, 3n)).rejects.toMatchObject({ code: 'stale-fence' });
    expect(await store.read('sku-42')).toEqual({ value: { stock: 4 }, fence: 3n });
  });

  it('keeps fences per key and reads undefined for unwritten keys', async () => {
    const store = create('keys.db');
    await store.write('a', { stock: 1 }, 10n);
    await store.write('b', { stock: 2 }, 1n);
    expect(await store.read('b')).toEqual({ value: { stock: 2 }, fence: 1n });
    expect(await store.read('never')).toBeUndefined();
  });

  it('refuses bad keys and fences with InvalidArgumentError', async () => {
    const store = create('args.db');
    for (const [key, fence] of [
      ['', 1n],
      ['k', undefined],
      ['k', 1],
      ['k', -1n],
    ] as const) {
      const error = await store.write(key, { stock: 0 }, fence as bigint).catch((e: unknown) => e);
      expect(isFencekitError(error, 'invalid-argument')).toBe(true);
    }
  });
});

describe('SqliteFencedResource', () => {
  it('refuses a stale write from another connection to the same file', async () => {
    const [first, second] = [sqlite<string>('shared.db'), sqlite<string>('shared.db')];
    await first.write('leader-claim', 'term 7', 7n);
    await expect(second.write('leader-claim', 'term 6', 6n)).rejects.toMatchObject({
      code: 'stale-fence',
      highestSeen: 7n,
    });
    await second.write('leader-claim', 'term 8', 8n);
    expect(await first.read('leader-claim')).toEqual({ value: 'term 8', fence: 8n });
  });

  it('stores fences beyond 2^53 exactly', async () => {
    const store = sqlite<number>('big.db');
    const big = 2n ** 60n + 1n;
    await store.write('k', 1, big);
    await expect(store.write('k', 2, big - 1n)).rejects.toMatchObject({ highestSeen: big });
    expect((await store.read('k'))?.fence).toBe(big);
    await expect(store.write('k', 3, 2n ** 63n)).rejects.toMatchObject({ code: 'invalid-argument' });
  });

  it("accepts the same fence again with sameFence: 'accept'", async () => {
    const store = sqlite<number>('same.db', { sameFence: 'accept', table: 'stock' });
    await store.write('k', 1, 5n);
    await store.write('k', 2, 5n);
    await expect(store.write('k', 3, 4n)).rejects.toMatchObject({ code: 'stale-fence' });
    expect(await store.read('k')).toEqual({ value: 2, fence: 5n });
  });

  it('works on a database the caller opened, creating its table there', async () => {
    const db = new Database(join(dir, 'caller.db'));
    const store = new SqliteFencedResource<string>({ database: db, table: 'claims' });
    await store.write('k', 'v', 1n);
    const row = db.prepare('SELECT key, value, fence FROM claims').get();
    expect(row).toEqual({ key: 'k', value: '"v"', fence: 1 });
    store.close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('refuses a table name that is not an identifier', () => {
    expect(() => new SqliteFencedResource({ database: ':memory:', table: 'x; DROP TABLE y' })).toThrow(
      'Invalid table',
    );
  });
});
