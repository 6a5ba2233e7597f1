import { describe, expect, it } from 'vitest';
import { SharedResource } from '../src/resource/shared-ops.js';

/** The resource side of the semaphore and rwlock workloads, without processes: its fence rules and counts. */
function resource(fencing: boolean) {
  const shared = new SharedResource(fencing);
  const seen: { f: string; value: Record<string, unknown> }[] = [];
  let time = 0;
  const call = (request: Record<string, unknown>) =>
    shared.handle(request, (f, value) => {
      seen.push({ f, value });
      return ++time;
    });
  return { call, seen };
}

describe('SharedResource', () => {
  it('counts the permits inside the pool and never refuses an entry', () => {
    const { call, seen } = resource(true);
    expect(call({ op: 'sem-enter', client: 1, permits: 2, limit: 2, fence: '9' })).toMatchObject({
      inside: 2,
    });
    // A lower fence is no reason to refuse: it may be one of the N valid holders.
    expect(call({ op: 'sem-enter', client: 2, permits: 1, limit: 2, fence: '3' })).toMatchObject({
      accepted: true,
      inside: 3,
    });
    call({ op: 'sem-leave', client: 1 });
    expect(seen.at(-1)).toEqual({ f: 'sem-leave', value: { client: 1, inside: 1 } });
    expect(seen[0]).toEqual({
      f: 'sem-enter',
      value: { client: 1, permits: 2, limit: 2, fence: '9', inside: 2, accepted: true },
    });
  });

  it('with fencing, refuses a writer not above every entered fence and a reader below an entered writer', () => {
    const { call } = resource(true);
    expect(call({ op: 'rw-enter', client: 1, mode: 'read', fence: '5' })).toMatchObject({ accepted: true });
    expect(call({ op: 'rw-enter', client: 2, mode: 'read', fence: '4' })).toMatchObject({ accepted: true });
    expect(call({ op: 'rw-enter', client: 3, mode: 'write', fence: '5' })).toMatchObject({ accepted: false });
    expect(call({ op: 'rw-enter', client: 3, mode: 'write', fence: '6' })).toMatchObject({ accepted: true });
    expect(call({ op: 'rw-read', client: 1, fence: '5' })).toMatchObject({ accepted: false });
    expect(call({ op: 'rw-enter', client: 4, mode: 'read', fence: '6' })).toMatchObject({ accepted: false });
    expect(call({ op: 'rw-write', client: 3, value: 'c3.1', fence: '6' })).toMatchObject({ accepted: true });
    expect(call({ op: 'rw-enter', client: 4, mode: 'read', fence: '7' })).toMatchObject({ accepted: true });
    expect(call({ op: 'rw-read', client: 4, fence: '7' })).toMatchObject({
      accepted: true,
      value: 'c3.1',
      writtenFence: '6',
    });
    // The writer stayed inside past its lease: a higher fence has entered since, so its write is refused.
    expect(call({ op: 'rw-write', client: 3, value: 'c3.1', fence: '6' })).toMatchObject({ accepted: false });
  });

  it('without fencing, accepts every access and records the fences for the checker', () => {
    const { call, seen } = resource(false);
    call({ op: 'rw-enter', client: 3, mode: 'write', fence: '6' });
    call({ op: 'rw-write', client: 3, value: 'c3.1', fence: '6' });
    expect(call({ op: 'rw-read', client: 1, fence: '5' })).toMatchObject({
      accepted: true,
      writtenFence: '6',
    });
    expect(seen.map((s) => s.f)).toEqual(['rw-enter', 'rw-write', 'rw-read']);
    expect(seen[2]!.value).toMatchObject({ client: 1, fence: '5', accepted: true });
  });

  it('leaves other ops to the caller', () => {
    expect(resource(true).call({ op: 'buy', client: 1 })).toBeUndefined();
  });
});
