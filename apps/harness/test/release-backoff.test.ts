import { MemoryLockClient, MemoryLockServer, NotLockHolderError } from '@fencekit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { OpRecorder } from '../src/client/recorder.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { EventPipe } from '../src/run/event-pipe.js';
import { lockedSections, RELEASE_FAILED_BACKOFF_SESSIONS } from '../src/workloads/sections.js';
import type { ClientConfig, WorkloadContext } from '../src/workloads/types.js';

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

const SESSION_MS = 100;

/**
 * One client taking the lock twice with core's in-process lock; the first lease's release is given
 * back and then reported lost (as a release whose answer an outage swallowed), when `failFirst`.
 */
async function twoSections(failFirst: false | Error): Promise<UnindexedEvent[]> {
  const locks = new MemoryLockClient({ server });
  clients.push(locks);
  let grants = 0;
  const acquire = locks.acquire.bind(locks);
  locks.acquire = (async (...args: Parameters<typeof acquire>) => {
    const lease = await acquire(...args);
    if (++grants === 1 && failFirst) {
      const release = lease.release.bind(lease);
      Object.defineProperty(lease, 'release', {
        value: async () => {
          await release();
          throw failFirst;
        },
      });
    }
    return lease;
  }) as typeof locks.acquire;
  const pipe = new CapturedPipe();
  const config = {
    index: 0,
    clients: 1,
    backend: 'memory',
    namespace: 'backoff',
    ttlMs: 1_000,
    sessionMs: SESSION_MS,
    opTimeoutMs: 1_000,
    acquire: 'wait',
  } as ClientConfig;
  const ctx = {
    config,
    locks,
    recorder: new OpRecorder(0, 1, pipe),
    stopping: new AbortController().signal,
    random: Math.random,
  } as unknown as WorkloadContext;
  let sections = 0;
  await lockedSections(ctx, 'r', async () => (++sections === 2 ? 'done' : 'more'));
  return pipe.events;
}

/** ms from the end of the first release to the invoke of the second acquire. */
function gapMs(events: UnindexedEvent[]): number {
  const released = events.find((e) => e.f === 'release' && e.type !== 'invoke')!;
  const again = events.filter((e) => e.f === 'acquire' && e.type === 'invoke')[1]!;
  return (again.time - released.time) / 1e6;
}

describe('a client whose release failed', () => {
  it(`stays out of the contest for ${RELEASE_FAILED_BACKOFF_SESSIONS} sessions before it asks again`, async () => {
    const events = await twoSections(new Error('connection lost before the answer'));
    expect(events.find((e) => e.f === 'release' && e.type !== 'invoke')?.type).not.toBe('ok');
    expect(gapMs(events)).toBeGreaterThanOrEqual(RELEASE_FAILED_BACKOFF_SESSIONS * SESSION_MS - 1);
  });

  it('asks again at once after a release refused as not its own (nothing of it is left)', async () => {
    const events = await twoSections(new NotLockHolderError('r', 'me'));
    expect(events.find((e) => e.f === 'release' && e.type !== 'invoke')?.type).toBe('fail');
    expect(gapMs(events)).toBeLessThan(RELEASE_FAILED_BACKOFF_SESSIONS * SESSION_MS - 50);
  });

  it('asks again at once after a confirmed release', async () => {
    const events = await twoSections(false);
    // Well under the back-off: nothing but the loop between the two ops.
    expect(gapMs(events)).toBeLessThan(RELEASE_FAILED_BACKOFF_SESSIONS * SESSION_MS - 50);
  });
});
