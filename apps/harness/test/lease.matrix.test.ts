import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reportsDir, run, stats } from './support/runs.js';

/**
 * The lease check on real backends: it judges the clients' own beliefs (grant, validUntil read on the
 * history's clock, end), so it convicts where two clients believed at once, and only there. A client
 * pause alone convicts nothing when the paused holder's validUntil was honest: its window ends at its
 * validUntil, before the next grant. Two holders believing at once need a lie somewhere: a server
 * clock that jumped (Redlock's scripted scenario), or an adapter handing out a dead lease.
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

const leaseChecks = (results: Parameters<typeof stats>[0]) =>
  Object.fromEntries(['lease', 'liveness', 'bounds'].map((c) => [c, results.checkers[c]?.verdict]));

describe('the lease, liveness and bounds checks on real runs', () => {
  it('convict Redlock under the scripted clock jump: two grants believed valid at once', async () => {
    const { results } = await run({
      backend: 'redlock',
      workload: 'inventory',
      scenario: 'clock-jump',
      fencing: false,
      clients: 4,
      time: '10s',
      seed: 1,
      out,
    });
    const lease = results.checkers.lease!;
    expect(lease.verdict, JSON.stringify(lease)).toBe('illegal');
    const overlap = lease.violations[0] as { kind: string; processes: number[]; firstLeftNs: number };
    expect(overlap.kind).toBe('overlap');
    expect(overlap.processes[0]! % 4).not.toBe(overlap.processes[1]! % 4);
    // The holder still had validity left by its own reckoning when the second client was granted.
    expect(overlap.firstLeftNs).toBeGreaterThan(0);
  }, 60_000);

  it('keep the memory backend clean under client pauses: no grant handed out past its validUntil', async () => {
    // Before remote-lock.ts gave back grants whose validity a queued wait had used up, this run
    // recorded about a dozen 'expired-grant' violations (validMs < 0 at the grant).
    const { results } = await run({
      backend: 'memory',
      workload: 'inventory',
      fault: 'pause-client',
      clients: 5,
      time: '6s',
      seed: 1,
      out,
    });
    expect(leaseChecks(results), JSON.stringify(results.checkers.lease)).toEqual({
      lease: 'ok',
      liveness: 'ok',
      bounds: 'ok',
    });
    expect(stats(results, 'lease')).toMatchObject({ expiredGrants: 0, overlaps: 0 });
    expect(stats(results, 'lease').grants as number).toBeGreaterThan(10);
  }, 60_000);

  it('do not convict a single Redis whose paused holder wrote stale: its validUntil was honest', async () => {
    const { results } = await run({
      backend: 'redis',
      workload: 'inventory',
      fault: 'pause-client',
      fencing: false,
      clients: 5,
      time: '8s',
      seed: 1,
      out,
    });
    // The resource saw the stale write (the pause outlived the TTL) ...
    expect(results.checkers.inventory?.verdict).toBe('illegal');
    // ... but no two clients believed at once: the lease promise itself held.
    expect(leaseChecks(results)).toEqual({ lease: 'ok', liveness: 'ok', bounds: 'ok' });
  }, 60_000);

  it('record the Curator pattern on ZooKeeper: a holder suspended within its session reclaims its lock, and stays clean', async () => {
    const { run: r, results } = await run({
      backend: 'zk',
      workload: 'inventory',
      fault: 'suspend',
      clients: 4,
      time: '12s',
      seed: 1,
      out,
    });
    expect(leaseChecks(results), JSON.stringify(results.checkers)).toEqual({
      lease: 'ok',
      liveness: 'ok',
      bounds: 'ok',
    });
    const aimed = r.meta.faultsApplied.filter((f) => f.fault === 'suspend' && f.applied);
    expect(aimed.length, JSON.stringify(r.meta.faultsApplied)).toBeGreaterThan(0);
    const history = readFileSync(join(r.dir, 'history.jsonl'), 'utf8').split('\n').filter(Boolean);
    const reclaimed = history.map((l) => JSON.parse(l)).filter((e) => e.f === 'reclaim' && e.type === 'ok');
    // The reclaimed lease is a new grant on the same fence, judged like any other.
    expect(reclaimed.length).toBeGreaterThan(0);
    expect(reclaimed[0].value).toMatchObject({ grant: expect.any(String), validUntil: expect.any(String) });
  }, 90_000);

  for (const backend of ['zk', 'etcd'] as const) {
    it(`keep ${backend} clean under client pauses, without clock faults`, async () => {
      const { results } = await run({
        backend,
        workload: 'inventory',
        fault: 'pause-client',
        clients: 4,
        time: '10s',
        seed: 1,
        out,
      });
      expect(leaseChecks(results), JSON.stringify(results.checkers)).toEqual({
        lease: 'ok',
        liveness: 'ok',
        bounds: 'ok',
      });
      expect(stats(results, 'lease').observations as number).toBeGreaterThan(0);
    }, 90_000);
  }
});
