import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseHistoryJsonl } from '../src/history/index.js';
import { checkCron, checkElection, checkFences, checkInventory, checkMutex } from '../src/lock/index.js';

/** Real harness histories (test/lock-fixtures): what each run is known to have done to the resource. */
async function history(name: string) {
  const file = new URL(`./lock-fixtures/${name}.jsonl`, import.meta.url);
  return parseHistoryJsonl(await readFile(file, 'utf8'), name);
}

describe('lock checkers on real harness histories', () => {
  it('redis mutex, client and server paused, no fencing: the paused holder overlaps every later one', async () => {
    const h = await history('redis-mutex-pause-client+pause-server-unfenced');
    const result = checkMutex(h);
    expect(result.verdict).toBe('illegal');
    expect(result.stats).toMatchObject({ sections: 30, overlaps: 5, open: 0 });
    // One holder (fence 5) stayed inside while five later holders came and went.
    expect(new Set(result.violations.map((v) => v.first.fence))).toEqual(new Set(['5']));
    expect(result.violations.map((v) => v.second.fence)).toEqual(['6', '7', '8', '9', '10']);
  });

  it('redis inventory under a GC pause without fencing: the stale writes get through and units are lost', async () => {
    const h = await history('redis-inventory-scenario-gc-pause-unfenced');
    const inventory = checkInventory(h);
    expect(inventory.verdict).toBe('illegal');
    expect(inventory.violations.some((v) => v.kind === 'lost-update' && v.before !== undefined)).toBe(true);
    const fences = checkFences(h);
    expect(fences.verdict).toBe('illegal');
    expect(
      fences.violations.every((v) => v.kind === 'stale-accepted' && BigInt(v.fence) < BigInt(v.highest)),
    ).toBe(true);
  });

  it('the same scenario with fencing: the resource refuses the stale writes and nothing is lost', async () => {
    const h = await history('redis-inventory-scenario-gc-pause-fenced');
    expect(checkInventory(h).verdict).toBe('ok');
    const fences = checkFences(h);
    expect(fences.verdict).toBe('ok');
    expect(fences.stats.staleRefused).toBeGreaterThan(0);
  });

  it('etcd election under pauses and partitions with fencing: one leader at a time', async () => {
    const h = await history('etcd-election-pause-client+partition-fenced');
    const result = checkElection(h);
    expect(result.verdict).toBe('ok');
    expect(result.stats.claims).toBeGreaterThan(0);
    expect(checkFences(h).verdict).toBe('ok');
  });

  it('etcd cron with a paused worker: every tick ran once', async () => {
    const result = checkCron(await history('etcd-cron-pause-client-fenced'));
    expect(result.verdict).toBe('ok');
    expect(result.stats.ticks).toBeGreaterThan(0);
    expect(result.stats.duplicates).toBe(0);
  });
});
