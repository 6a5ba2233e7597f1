import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { checkersFor, livenessSettleMs, recoveryPhaseMs } from '../src/check/checkers.js';
import type { FaultName } from '../src/nemesis/faults.js';
import { faultSchedule } from '../src/nemesis/schedule.js';

/**
 * R4 F2: the harness excused every healed fault for a whole liveness bound (settle = bound = 2 s) while
 * the schedule's quiet gaps are 0.5–1.5 TTL and its recovery phase left 1–2 s after the final heal, so a
 * lock stuck for good was never convicted in a 12–20 s run. Here the real schedule of a run places the
 * nemesis ops (each fault in force for its whole slot, the last one until the final heal: the most they
 * could excuse; each heal taking 300 ms as a restart does), the run ends as the fault phase ends it, and the harness's own liveness
 * checker judges a lock stuck from early on: client 0 holds once and releases at 200 ms, and nobody is
 * ever granted again while four clients wait back to back to the end.
 */

const ns = (ms: number) => Math.round(ms * 1e6);

function stuckLockHistory(options: {
  backend: string;
  fault: FaultName;
  durationMs: number;
  ttlMs: number;
  sessionMs: number;
  stuck: boolean;
}): HistoryEvent[] {
  const { backend, fault, durationMs, ttlMs, sessionMs } = options;
  const recoveryMs = recoveryPhaseMs(backend, ttlMs);
  const { faults, recoveryAtMs } = faultSchedule({
    seed: 1,
    faults: [fault],
    durationMs,
    ttlMs,
    sessionMs,
    recoveryMs,
  });
  expect(faults.length).toBeGreaterThan(0);
  const events: Omit<HistoryEvent, 'index'>[] = [];
  const push = (
    t: number,
    process: number | 'nemesis',
    type: HistoryEvent['type'],
    f: string,
    value: unknown,
  ) => events.push({ time: ns(t), process, type, f, value });
  const grant = (p: number, t: number, id: string) =>
    push(t, p, 'ok', 'acquire', {
      grant: id,
      resource: 'stock',
      validUntil: String(ns(t + ttlMs)),
      at: String(ns(t)),
    });
  push(50, 0, 'invoke', 'acquire', { resource: 'stock', waitMs: 4_000 });
  grant(0, 100, 'c0.1');
  push(200, 0, 'invoke', 'release', { grant: 'c0.1' });
  push(210, 0, 'ok', 'release', null);
  for (const [i, f] of faults.entries()) {
    // The last one runs on until the recovery phase cuts it short (an aimed fault's wait and stall can):
    // its heal is the final heal, the latest a fault can end.
    const stopMs = i === faults.length - 1 ? recoveryAtMs : f.atMs + f.durationMs;
    push(f.atMs, 'nemesis', 'invoke', 'start', { fault: f.fault });
    push(f.atMs + 5, 'nemesis', 'ok', 'start', { fault: f.fault, node: 'n1' });
    push(stopMs, 'nemesis', 'invoke', 'stop', { fault: f.fault });
    push(stopMs + 300, 'nemesis', 'ok', 'stop', { fault: f.fault });
  }
  push(recoveryAtMs, 'nemesis', 'invoke', 'stop', { fault: 'all' });
  push(recoveryAtMs + 300, 'nemesis', 'ok', 'stop', { fault: 'all' });
  // As the fault phase ends the run: its time, or the whole recovery phase after a slow final heal.
  const endMs = Math.max(durationMs, recoveryAtMs + 300 + recoveryMs);
  let grants = 0;
  for (const p of [1, 2, 3, 4]) {
    for (let t = 300 + p; t < endMs - 100; t += 4_010) {
      push(t, p, 'invoke', 'acquire', { resource: 'stock', waitMs: 4_000 });
      // A wait still pending when the clients are told to stop ends then (aborted).
      if (options.stuck) push(Math.min(t + 4_000, endMs), p, 'fail', 'acquire', { code: 'timeout' });
      else {
        // The control: each wait is answered at once and the grant released soon after.
        grant(p, t + 20, `c${p}.${++grants}`);
        push(t + 60, p, 'invoke', 'release', { grant: `c${p}.${grants}` });
        push(t + 70, p, 'ok', 'release', null);
      }
    }
  }
  return events.sort((a, b) => a.time - b.time).map((e, index) => ({ ...e, index }) as HistoryEvent);
}

async function livenessVerdict(backend: string, history: HistoryEvent[], ttlMs: number) {
  const { liveness } = checkersFor({ workload: 'inventory', fenced: true, initialStock: 10, ttlMs, backend });
  return (await liveness!(history)).verdict;
}

describe('a lock stuck for good is convictable in every scheduled run', () => {
  it.each([
    ['etcd', 'kill', 15_000],
    ['etcd', 'flicker', 20_000],
    ['zk', 'kill', 12_000],
    ['redis', 'kill', 5_000],
    ['memory', 'pause-client', 5_000],
  ] as const)(
    '%s, %s, %i ms: convicted; the same run with the lock granted again is not',
    async (backend, fault, durationMs) => {
      // Each backend's default TTL and session (backends/*.ts).
      const ttlMs = { etcd: 1_000, zk: 1_000, redis: 500, memory: 400 }[backend];
      const sessionMs = { etcd: 2_000, zk: 4_000, redis: ttlMs, memory: ttlMs }[backend];
      const run = { backend, fault, durationMs, ttlMs, sessionMs };
      expect(await livenessVerdict(backend, stuckLockHistory({ ...run, stuck: true }), ttlMs)).toBe(
        'illegal',
      );
      expect(await livenessVerdict(backend, stuckLockHistory({ ...run, stuck: false }), ttlMs)).toBe('ok');
    },
  );

  it('settles a healed fault for an election on etcd and ZooKeeper, not at all where servers answer once back', () => {
    expect(livenessSettleMs('etcd', 1_000)).toBe(1_000);
    expect(livenessSettleMs('zk', 2_000)).toBe(2_000);
    expect(livenessSettleMs('redis', 1_000)).toBe(0);
    expect(livenessSettleMs('memory', 1_000)).toBe(0);
    // The recovery phase the schedule reserves: settle + bound (max(2 s, 2 TTL)) + 1 s.
    expect(recoveryPhaseMs('etcd', 1_000)).toBe(4_000);
    expect(recoveryPhaseMs('redis', 500, 'mutex')).toBe(3_000);
    // Workloads without a liveness check keep the two TTLs they had.
    expect(recoveryPhaseMs('etcd', 1_000, 'cron')).toBe(2_000);
    const { recoveryAtMs } = faultSchedule({
      seed: 1,
      faults: ['kill'],
      durationMs: 15_000,
      ttlMs: 1_000,
      recoveryMs: 4_000,
    });
    expect(15_000 - recoveryAtMs).toBeGreaterThanOrEqual(4_000);
  });
});
