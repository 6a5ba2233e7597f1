import { describe, expect, it } from 'vitest';
import { memoryBackend } from '../src/backends/memory.js';
import { faultSchedule, OptionsError, parseDuration, parseRunOptions } from '../src/index.js';
import { validateRun } from '../src/run/compatibility.js';

describe('run options', () => {
  it('parses durations and fault lists', () => {
    expect(parseDuration('60s')).toBe(60_000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('250ms')).toBe(250);
    const o = parseRunOptions({
      backend: 'etcd',
      workload: 'inventory',
      fault: 'pause-client,partition',
      time: '60s',
    });
    expect(o.fault).toEqual(['pause-client', 'partition']);
    expect(o.time).toBe(60_000);
    expect(o.fencing).toBe(true);
  });

  it('names an unknown backend, workload or fault and lists the known ones', () => {
    expect(() => parseRunOptions({ backend: 'consul' as never, workload: 'inventory' })).toThrow(
      /--backend: unknown backend; known backends: memory, redis, redlock, zk, etcd/,
    );
    expect(() => parseRunOptions({ backend: 'redis', workload: 'queue' as never })).toThrow(
      /unknown workload/,
    );
    expect(() =>
      parseRunOptions({ backend: 'redis', workload: 'mutex', fault: 'pause-client,meteor' }),
    ).toThrow(/unknown fault "meteor"; known faults: none, partition/);
    expect(() => parseRunOptions({ backend: 'redis', workload: 'mutex', time: 'soon' })).toThrow(
      /"soon" is not a duration/,
    );
    expect(() => parseRunOptions({ backend: 'redis', workload: 'mutex', clients: 0 })).toThrow(OptionsError);
    // Lock TTLs are whole milliseconds: a number from code is held to what the CLI's parser gives.
    expect(() => parseRunOptions({ backend: 'redis', workload: 'mutex', ttl: 1_500.5 })).toThrow(
      /--ttl: a whole number of milliseconds/,
    );
    expect(() => parseRunOptions({ backend: 'redis', workload: 'mutex', ttl: '2d' })).toThrow(
      /not a duration/,
    );
    expect(() => parseRunOptions({ backend: 'redis', workload: 'mutex', ttl: 2 ** 31 })).toThrow(
      /at most one day/,
    );
  });

  it('refuses combinations that cannot mean anything', () => {
    const partition = parseRunOptions({ backend: 'memory', workload: 'inventory', fault: 'partition' });
    expect(() => validateRun(partition, memoryBackend)).toThrow(/fault partition does not apply to memory/);
    const clock = parseRunOptions({ backend: 'memory', workload: 'inventory', scenario: 'clock-jump' });
    expect(() => validateRun(clock, memoryBackend)).toThrow(/use --backend redlock/);
  });

  it('takes a ZooKeeper session apart from the TTL, within what the adapter and the ensemble accept', () => {
    const apart = parseRunOptions({ backend: 'zk', workload: 'inventory', ttl: '6s', session: '4s' });
    expect(apart).toMatchObject({ ttl: 6_000, session: 4_000 });
    expect(parseRunOptions({ backend: 'zk', workload: 'inventory' }).session).toBeUndefined();
    // The adapter's own rule: the ensembles' follower lag (2 s) must leave the session some validity.
    expect(() => parseRunOptions({ backend: 'zk', workload: 'inventory', session: '2s' })).toThrow(
      /--session: .*sessionTimeoutMs.*at least 27\d\d ms with followerLagMs 2000/s,
    );
    expect(() => parseRunOptions({ backend: 'zk', workload: 'inventory', session: '61s' })).toThrow(
      /--session: at most 60000 ms/,
    );
    expect(() => parseRunOptions({ backend: 'etcd', workload: 'inventory', session: '4s' })).toThrow(
      /--session: only the zk backend has a session apart from its lock TTL/,
    );
  });
});

describe('fault schedule', () => {
  it('replays the same schedule for the same seed, and ends with a recovery phase', () => {
    const options = { seed: 7, faults: ['pause-client', 'kill'] as const, durationMs: 20_000, ttlMs: 500 };
    const a = faultSchedule({ ...options, faults: [...options.faults] });
    const b = faultSchedule({ ...options, faults: [...options.faults] });
    expect(a).toEqual(b);
    expect(a.faults.length).toBeGreaterThan(3);
    const last = a.faults.at(-1)!;
    expect(last.atMs + last.durationMs).toBeLessThanOrEqual(a.recoveryAtMs);
    for (const f of a.faults) expect(f.durationMs).toBeGreaterThanOrEqual(750);
    const other = faultSchedule({ ...options, seed: 8, faults: [...options.faults] });
    expect(other.faults).not.toEqual(a.faults);
  });
});
