import { checkLeases, type HistoryEvent, leaseWindows } from '@fencekit/checker';
import { MemoryLockClient, MemoryLockServer } from '@fencekit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { OpRecorder } from '../src/client/recorder.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { EventPipe } from '../src/run/event-pipe.js';
import { acquireHeld } from '../src/workloads/held-lease.js';
import type { ClientConfig, WorkloadContext } from '../src/workloads/types.js';

/** Keeps what a client process would send to the coordinator. */
class CapturedPipe extends EventPipe {
  readonly events: UnindexedEvent[] = [];
  override push(event: UnindexedEvent): void {
    this.events.push(event);
  }
}

const server = new MemoryLockServer();
const clients: MemoryLockClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** One client's workload context around core's in-process lock (real leases, real clocks). */
function context(index: number, ttlMs: number, pipe: CapturedPipe): WorkloadContext {
  const locks = new MemoryLockClient({ server });
  clients.push(locks);
  const config = {
    index,
    clients: 2,
    backend: 'memory',
    namespace: 'rec',
    ttlMs,
    opTimeoutMs: 1_000,
    acquire: 'wait',
  } as ClientConfig;
  return {
    config,
    locks,
    recorder: new OpRecorder(index, 2, pipe),
    stopping: new AbortController().signal,
    random: Math.random,
  } as unknown as WorkloadContext;
}

const history = (pipe: CapturedPipe): HistoryEvent[] =>
  [...pipe.events].sort((a, b) => a.time - b.time).map((e, index) => ({ index, ...e }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('lease facts as a client records them', () => {
  it('puts validUntil on the history clock: validity left matches the lease’s own clock', async () => {
    const pipe = new CapturedPipe();
    const held = await acquireHeld(context(0, 5_000, pipe), 'r', 'c0.1');
    const ok = pipe.events.find((e) => e.type === 'ok')!;
    const value = ok.value as {
      validUntil: string;
      at: string;
      validMs: number;
      grant: string;
      fence: string;
    };
    expect(value.grant).toBe('c0.1');
    // The same fixed validUntil converted again here: both conversions read the two clocks back to
    // back, so they agree to within those reads (microseconds; 2 ms allows a GC between them),
    // however long ago the first one ran.
    const hr = Number(process.hrtime.bigint());
    const perf = performance.now();
    const expected = hr - (perf - held!.lease.validUntil) * 1e6;
    expect(Math.abs(Number(value.validUntil) - expected) / 1e6).toBeLessThan(2);
    expect(value.validMs).toBeGreaterThan(4_900);
    expect(Number(value.at)).toBeLessThanOrEqual(ok.time);
    await held![Symbol.asyncDispose]();
    const release = pipe.events.find((e) => e.f === 'release' && e.type === 'invoke')!;
    expect(release.value).toMatchObject({ grant: 'c0.1', fence: value.fence });
    expect((release.value as Record<string, unknown>).lease).toBeUndefined();
  });

  it('records a check that found the lease over, and when its signal aborted, on the release', async () => {
    const pipe = new CapturedPipe();
    const held = await acquireHeld(context(0, 60, pipe), 'r', 'c0.1');
    await sleep(120);
    const check = held!.check();
    expect(check).toMatchObject({ grant: 'c0.1', held: false });
    await held![Symbol.asyncDispose]();
    const release = pipe.events.find((e) => e.f === 'release' && e.type === 'invoke')!;
    const ended = (release.value as { lease: { held: boolean; at: string; reason: string } }).lease;
    expect(ended).toMatchObject({ grant: 'c0.1', held: false, reason: 'ttl expired' });
    const validUntil = Number(
      (pipe.events.find((e) => e.type === 'ok')!.value as { validUntil: string }).validUntil,
    );
    // The expiry watch fires at validUntil, or a little later on a busy loop; never before.
    expect(Number(ended.at)).toBeGreaterThanOrEqual(validUntil);
    expect(leaseWindows(history(pipe)).windows[0]).toMatchObject({ end: validUntil, endedBy: 'expired' });
  });

  it('gives the lease check two clients taking turns: no overlap', async () => {
    const pipe = new CapturedPipe();
    const first = context(0, 5_000, pipe);
    const second = context(1, 5_000, pipe);
    const a = await acquireHeld(first, 'r', 'c0.1');
    const waiting = acquireHeld(second, 'r', 'c1.1');
    await first.recorder.op('buy', { grant: 'c0.1' }, async (note) => {
      note({ lease: a!.check() });
      return { type: 'ok', value: null };
    });
    await a![Symbol.asyncDispose]();
    const b = await waiting;
    await b![Symbol.asyncDispose]();
    const result = checkLeases(history(pipe));
    expect(result).toMatchObject({ verdict: 'ok', stats: { grants: 2, observations: 1, overlaps: 0 } });
  });
});

describe('the close op', () => {
  it('records a close() still pending past its bound as info at that moment, then waits for it', async () => {
    const { recordClose } = await import('../src/client/close.js');
    const pipe = new CapturedPipe();
    const recorder = new OpRecorder(0, 1, pipe);
    let finish: () => void = () => undefined;
    // A backend client whose close() hangs until released, as one would against a hung server.
    const backend = {
      locks: new MemoryLockClient({ server }),
      close: () => new Promise<void>((resolve) => (finish = resolve)),
    };
    const started = performance.now();
    const done = recordClose(recorder, backend, { backend: 'memory', ttlMs: 500 } as ClientConfig);
    await sleep(4_300); // the memory bound (2 s) + the 2 s overrun, and a margin
    const [invoke, completion] = pipe.events;
    expect(invoke).toMatchObject({ f: 'close', type: 'invoke', value: { boundMs: 2_000 } });
    expect(completion).toMatchObject({ f: 'close', type: 'info' });
    expect((completion!.time - invoke!.time) / 1e6).toBeGreaterThanOrEqual(4_000);
    finish();
    await done;
    expect(performance.now() - started).toBeLessThan(6_000);
    await backend.locks.close();
  }, 10_000);
});
