import { describe, expect, it } from 'vitest';
import { etcdBackend } from '../src/backends/etcd.js';
import { memoryBackend } from '../src/backends/memory.js';
import { zkBackend } from '../src/backends/zk.js';
import { faultSchedule, OptionsError, parseRunOptions } from '../src/index.js';
import type { ClientHandle } from '../src/nemesis/nemesis.js';
import { validateRun } from '../src/run/compatibility.js';
import { EventWatch } from '../src/run/event-watch.js';
import { WindowWatch } from '../src/run/window-watch.js';
import { parseSeeds, selectEntries, suiteMatrix } from '../src/suite/matrix.js';

describe('the schedule of the aimed faults', () => {
  it('gives an aimed fault a slot for its wait plus a session and a second, and never schedules hang-at-close', () => {
    const { faults } = faultSchedule({
      seed: 3,
      faults: ['stall-holder', 'hang-at-close'],
      durationMs: 30_000,
      ttlMs: 1_000,
      sessionMs: 2_000,
    });
    expect(faults.length).toBeGreaterThan(1);
    for (const f of faults) {
      expect(f.fault).toBe('stall-holder');
      expect(f.waitMs).toBeGreaterThanOrEqual(1_500);
      expect(f.durationMs).toBe(f.waitMs! + 2_000 + 1_000);
    }
    expect(
      faultSchedule({ seed: 3, faults: ['hang-at-close'], durationMs: 30_000, ttlMs: 1_000 }).faults,
    ).toEqual([]);
  });

  it('is the same for the same seed', () => {
    const options = {
      seed: 9,
      faults: ['flicker', 'suspend', 'kill'] as const,
      durationMs: 40_000,
      ttlMs: 1_000,
    };
    expect(faultSchedule({ ...options, faults: [...options.faults] })).toEqual(
      faultSchedule({ ...options, faults: [...options.faults] }),
    );
  });
});

describe('sessions the aimed faults are sized by', () => {
  it('ZooKeeper: the TTL, at least twice the follower lag (2 s); etcd: whole seconds, at least 2', () => {
    expect(zkBackend.sessionMs!(1_000)).toBe(4_000);
    expect(zkBackend.sessionMs!(400)).toBe(4_000);
    expect(zkBackend.sessionMs!(5_000)).toBe(5_000);
    expect(etcdBackend.sessionMs!(1_000)).toBe(2_000);
    expect(etcdBackend.sessionMs!(2_500)).toBe(3_000);
    expect(memoryBackend.sessionMs).toBeUndefined();
  });
});

describe('a fault the backend cannot apply is refused before anything starts (exit 64)', () => {
  it('suspend needs the fault proxy, which the embedded memory backend does not have', () => {
    const options = parseRunOptions({ backend: 'memory', workload: 'mutex', fault: 'suspend' });
    expect(() => validateRun(options, memoryBackend)).toThrow(OptionsError);
    expect(() => validateRun(options, memoryBackend)).toThrow(/fault suspend does not apply to memory/);
  });

  it('every aimed fault applies to ZooKeeper and etcd', () => {
    for (const backend of [zkBackend, etcdBackend]) {
      const options = parseRunOptions({
        backend: backend.name,
        workload: 'inventory',
        fault: 'stall-holder,flicker,suspend,hang-at-close',
      });
      expect(() => validateRun(options, backend)).not.toThrow();
    }
  });
});

describe('EventWatch', () => {
  const client = (index: number) => ({ index }) as ClientHandle;
  const event = (f: string, type: 'invoke' | 'ok') => ({ time: 1, process: 0, type, f, value: null });

  it('hands each event to the first waiter that takes it, in order, and ends a wait on timeout and abort', async () => {
    const watch = new EventWatch();
    const never = new AbortController();
    const release = watch.next((e) => e.f === 'release', 1_000, never.signal);
    const any = watch.next(() => true, 1_000, never.signal);
    watch.see(client(2), [event('acquire', 'ok'), event('release', 'invoke')]);
    expect((await release)?.event.f).toBe('release');
    expect((await release)?.client.index).toBe(2);
    expect((await any)?.event.f).toBe('acquire');
    expect(await watch.next(() => true, 10, never.signal)).toBeUndefined();
    const aborted = new AbortController();
    const pending = watch.next(() => true, 60_000, aborted.signal);
    aborted.abort();
    expect(await pending).toBeUndefined();
    // Nothing is left waiting: a later event finds no taker.
    watch.see(client(0), [event('release', 'invoke')]);
  });
});

describe('suite --backends, --faults and --seeds', () => {
  it('keeps the cells on those backends whose faults include one of those, one entry per seed', () => {
    const entries = selectEntries(suiteMatrix(true, 20), { backends: 'zk,etcd', faults: 'stall-holder' });
    expect(entries).toHaveLength(40);
    for (const x of entries) {
      expect(['zk', 'etcd']).toContain(x.options.backend);
      expect(String(x.options.fault)).toContain('stall-holder');
    }
    expect(new Set(entries.map((x) => x.options.seed)).size).toBe(20);
  });

  it('refuses unknown names and seeds that are not a whole number', () => {
    expect(() => selectEntries([], { faults: 'stall' })).toThrow(
      /unknown fault stall; known: .*stall-holder/,
    );
    expect(() => selectEntries([], { backends: 'mongo' })).toThrow(OptionsError);
    expect(parseSeeds('20')).toBe(20);
    expect(parseSeeds(undefined)).toBeUndefined();
    for (const bad of ['0', '1.5', 'x', '-3']) expect(() => parseSeeds(bad)).toThrow(OptionsError);
  });
});

describe('WindowWatch', () => {
  it('gives an opened window to the first waiter that accepts it, pausing it there if asked; ends waits on timeout and abort', async () => {
    const watch = new WindowWatch();
    const paused: number[] = [];
    const client = (index: number) => ({ index, pause: () => paused.push(index) }) as unknown as ClientHandle;
    const never = new AbortController().signal;
    const onlyTwo = watch.next(1_000, never, { accept: (c) => c.index === 2, pause: true });
    const any = watch.next(1_000, never);
    watch.opened(client(1));
    watch.opened(client(2));
    expect((await any)?.index).toBe(1);
    expect((await onlyTwo)?.index).toBe(2);
    expect(paused).toEqual([2]);
    expect(await watch.next(10, never)).toBeUndefined();
    const aborted = new AbortController();
    aborted.abort();
    expect(await watch.next(60_000, aborted.signal)).toBeUndefined();
    watch.opened(client(3));
    expect(paused).toEqual([2]);
  });
});
