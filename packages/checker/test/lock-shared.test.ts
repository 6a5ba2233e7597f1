import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../src/history/types.js';
import { LockHistoryError } from '../src/lock/errors.js';
import { checkReadWriteLeases, checkReadWriteLock } from '../src/lock/rwlock.js';
import { checkSemaphore, checkSemaphoreLeases } from '../src/lock/semaphore.js';
import { runCheckers } from '../src/verdict.js';
import { HistoryBuilder } from './lock-history.js';

/** A semaphore holder's stretch inside the resource, as the harness's resource records it. */
const semSection = (h: HistoryBuilder, client: number, from: number, to: number, permits = 1, limit = 2) =>
  h
    .resource(from, 'sem-enter', { client, permits, limit, fence: String(client * 10), accepted: true })
    .resource(to, 'sem-leave', { client });

/** A grant's `ok` with its lease facts (and permits / mode), then its release's invoke. */
function grant(
  h: HistoryBuilder,
  process: number,
  id: string,
  at: number,
  validUntil: number,
  extra: Record<string, unknown>,
  releasedAt?: number,
): HistoryBuilder {
  h.client(at - 1, process, 'invoke', 'acquire', { resource: 'r' });
  h.client(at, process, 'ok', 'acquire', {
    grant: id,
    resource: 'r',
    validUntil: String(validUntil),
    at: String(at),
    ...extra,
  });
  if (releasedAt !== undefined) {
    h.client(releasedAt, process, 'invoke', 'release', { grant: id });
    h.client(releasedAt + 1, process, 'ok', 'release', null);
  }
  return h;
}

const sorted = (h: HistoryBuilder): HistoryEvent[] =>
  [...h.events].sort((a, b) => a.time - b.time || a.index - b.index).map((e, index) => ({ ...e, index }));

describe('checkSemaphore (the resource count)', () => {
  it('passes N holders at once, and a holder entering exactly as another leaves', () => {
    const h = new HistoryBuilder();
    semSection(h, 1, 0, 100);
    semSection(h, 2, 10, 50);
    semSection(h, 3, 50, 90); // enters at the instant 2 leaves: half-open, never 3 inside
    const result = checkSemaphore(h.events);
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ holders: 3, maxHeld: 2, overCapacity: 0, resources: 1 });
  });

  it('convicts N + 1 holders inside at once, naming the stretch and every holder', () => {
    const h = new HistoryBuilder();
    semSection(h, 1, 0, 100);
    semSection(h, 2, 10, 80);
    semSection(h, 3, 30, 60);
    const result = checkSemaphore(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations).toHaveLength(1);
    const [v] = result.violations;
    expect(v).toMatchObject({ kind: 'over-capacity', view: 'resource', limit: 2, peak: 3, from: 30, to: 60 });
    expect(v!.processes.sort()).toEqual([1, 2, 3]);
    expect(v!.message).toContain('3 permits inside the resource at once (limit 2)');
  });

  it('weighs each entry by its permits', () => {
    const h = new HistoryBuilder();
    semSection(h, 1, 0, 100, 2, 3);
    semSection(h, 2, 10, 20, 1, 3);
    expect(checkSemaphore(h.events).verdict).toBe('ok');
    semSection(h, 3, 40, 50, 2, 3);
    const result = checkSemaphore(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({ peak: 4, from: 40, to: 50 });
  });

  it('keeps an entry never left open to the end of the history', () => {
    const h = new HistoryBuilder();
    h.resource(0, 'sem-enter', { client: 1, limit: 1 });
    semSection(h, 2, 10, 20, 1, 1);
    const result = checkSemaphore(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.stats.open).toBe(1);
  });

  it('uses the permits option over the recorded limit, and says so when neither is there', () => {
    const h = new HistoryBuilder();
    h.resource(0, 'sem-enter', { client: 1 }).resource(5, 'sem-enter', { client: 2 });
    expect(checkSemaphore(h.events, { permits: 2 }).verdict).toBe('ok');
    expect(checkSemaphore(h.events, { permits: 1 }).verdict).toBe('illegal');
    expect(() => checkSemaphore(h.events)).toThrow(/semaphore's permits for resource/);
  });

  it('is unknown with nothing to check when there is no entry', () => {
    const result = checkSemaphore(new HistoryBuilder().resource(0, 'enter', { client: 1 }).events);
    expect(result.verdict).toBe('unknown');
    expect(result.nothingToCheck).toContain('sem-enter');
  });

  it('refuses malformed input with a typed error naming the event', () => {
    const bad = (value: unknown) => {
      const h = new HistoryBuilder().resource(0, 'sem-enter', { client: 1, limit: 2 });
      h.events.push({
        index: 1,
        time: 1,
        process: 'resource',
        type: 'ok',
        f: 'sem-enter',
        value,
      } as HistoryEvent);
      return () => checkSemaphore(h.events);
    };
    expect(bad({ client: 2, permits: 0, limit: 2 })).toThrow(LockHistoryError);
    expect(bad({ client: 2, permits: 1.5, limit: 2 })).toThrow(/value.permits/);
    expect(bad({ client: 2, limit: 3 })).toThrow(/limit recorded at event 0/);
    expect(bad({ permits: 1, limit: 2 })).toThrow(/value.client/);
    expect(bad('x')).toThrow(/object "value"/);
    expect(bad({ client: 2, limit: 2, fence: 'abc' })).toThrow(/value.fence/);
    expect(() => checkSemaphore([], { permits: 0 })).toThrow(LockHistoryError);
  });

  it('yields unknown (never a pass) through runCheckers when the input is malformed', async () => {
    const h = new HistoryBuilder().resource(0, 'sem-enter', { client: 1, limit: 'two' });
    const { verdict } = await runCheckers({ semaphore: (x: HistoryEvent[]) => checkSemaphore(x) }, h.events);
    expect(verdict).toBe('unknown');
  });
});

describe('checkSemaphoreLeases (the clients’ beliefs)', () => {
  it('passes N grants believed valid at once', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 10, 1_000, { permits: 1, limit: 2 }, 500);
    grant(h, 2, 'b', 20, 1_000, { permits: 1, limit: 2 }, 400);
    grant(h, 3, 'c', 401, 1_000, { permits: 1, limit: 2 }, 600);
    const result = checkSemaphoreLeases(sorted(h));
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ holders: 3, maxHeld: 2 });
  });

  it('convicts N + 1 grants believed valid at once; a window ends at its validUntil', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 10, 300, { permits: 1, limit: 2 }); // never released: believed until 300
    grant(h, 2, 'b', 20, 1_000, { permits: 1, limit: 2 }, 900);
    grant(h, 3, 'c', 400, 1_000, { permits: 1, limit: 2 }, 800); // a's window had ended: fine
    expect(checkSemaphoreLeases(sorted(h)).verdict).toBe('ok');
    grant(h, 4, 'd', 500, 1_000, { permits: 1, limit: 2 }, 700);
    const result = checkSemaphoreLeases(sorted(h));
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({ view: 'beliefs', peak: 3, from: 500, to: 700 });
    expect(result.violations[0]!.holders.map((x) => x.grant).sort()).toEqual(['b', 'c', 'd']);
  });
});

/** A read-write holder's stretch inside the resource with its access (a read or a write). */
function rwSection(
  h: HistoryBuilder,
  client: number,
  mode: 'read' | 'write',
  fence: number,
  from: number,
  to: number,
  access: { at: number; accepted?: boolean } | undefined = { at: from + 1 },
): HistoryBuilder {
  h.resource(from, 'rw-enter', { client, mode, fence: String(fence), accepted: true });
  if (access) {
    h.resource(access.at, mode === 'read' ? 'rw-read' : 'rw-write', {
      client,
      fence: String(fence),
      accepted: access.accepted ?? true,
    });
  }
  return h.resource(to, 'rw-leave', { client, fence: String(fence) });
}

describe('checkReadWriteLock (the resource)', () => {
  it('passes readers together and writers alone, fences in grant order', () => {
    const h = new HistoryBuilder();
    rwSection(h, 1, 'read', 1, 0, 100);
    rwSection(h, 2, 'read', 2, 10, 90);
    rwSection(h, 3, 'write', 3, 100, 200);
    rwSection(h, 1, 'read', 4, 200, 250);
    const result = checkReadWriteLock(sorted(h));
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ holders: 4, readers: 3, writers: 1, writerOverlaps: 0 });
  });

  it('convicts a writer inside with a reader, and two writers inside at once', () => {
    const h = new HistoryBuilder();
    rwSection(h, 1, 'read', 1, 0, 100);
    rwSection(h, 2, 'write', 2, 50, 150);
    rwSection(h, 3, 'write', 3, 140, 200);
    const result = checkReadWriteLock(sorted(h));
    expect(result.verdict).toBe('illegal');
    expect(result.stats.writerOverlaps).toBe(2);
    expect(result.violations.map((v) => [v.kind, 'from' in v ? v.from : -1, 'to' in v ? v.to : -1])).toEqual([
      ['writer-overlap', 50, 100],
      ['writer-overlap', 140, 150],
    ]);
    expect(result.violations[0]!.message).toContain('client 1 (fence 1, read) and client 2 (fence 2, write)');
  });

  it('convicts a read served under a fence a later writer had superseded (the fence rule, even unfenced)', () => {
    const h = new HistoryBuilder();
    // Reader 1 (fence 4) lapsed; writer 2 was granted after it (fence 5) and wrote; then reader 1 read.
    rwSection(h, 2, 'write', 5, 100, 150, { at: 120 });
    rwSection(h, 1, 'read', 4, 200, 260, { at: 230 });
    const result = checkReadWriteLock(sorted(h));
    expect(result.verdict).toBe('illegal');
    expect(result.violations).toEqual([
      expect.objectContaining({ kind: 'superseded-read', client: 1, fence: '4', above: '5' }),
    ]);
  });

  it('passes the same read refused by the resource, and counts the refusal', () => {
    const h = new HistoryBuilder();
    rwSection(h, 2, 'write', 5, 100, 150, { at: 120 });
    rwSection(h, 1, 'read', 4, 200, 260, { at: 230, accepted: false });
    const result = checkReadWriteLock(sorted(h));
    expect(result.verdict).toBe('ok');
    expect(result.stats.staleRefused).toBe(1);
  });

  it('convicts a write accepted below a fence that had already entered', () => {
    const h = new HistoryBuilder();
    rwSection(h, 1, 'write', 4, 0, 300, { at: 250 }); // stalled inside past its lease
    rwSection(h, 2, 'read', 5, 200, 220);
    const result = checkReadWriteLock(sorted(h), { fencing: true });
    expect(result.violations.map((v) => v.kind)).toContain('stale-write');
  });

  it('with fencing, excuses an overlap past the earlier holder’s believed lease when the later fence is higher', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 0, 100, { mode: 'write', fence: '4' }); // believed until 100
    rwSection(h, 1, 'write', 4, 5, 300, { at: 10 }); // stays inside to 300, its write long done
    grant(h, 2, 'b', 150, 1_000, { mode: 'read', fence: '5' }, 250);
    rwSection(h, 2, 'read', 5, 160, 240, { at: 170 });
    expect(checkReadWriteLock(sorted(h)).verdict).toBe('illegal');
    const fenced = checkReadWriteLock(sorted(h), { fencing: true });
    expect(fenced.verdict).toBe('ok');
    expect(fenced.stats).toMatchObject({ writerOverlaps: 0, overlapsPastLease: 1 });
  });

  it('with fencing, reads the earlier holder’s lease from its grant before it entered when a fence repeats', () => {
    // A Redis restarted without persistence counts fences from 1 again: process 1 is granted fence 4 twice.
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 0, 100, { mode: 'read', fence: '4' }, 300);
    rwSection(h, 1, 'read', 4, 5, 290, { at: 280, accepted: false }); // paused inside past its lease
    rwSection(h, 2, 'write', 5, 150, 200, { at: 160 });
    grant(h, 1, 'b', 500, 1_500, { mode: 'read', fence: '4' }, 900);
    const result = checkReadWriteLock(sorted(h), { fencing: true });
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ writerOverlaps: 0, overlapsPastLease: 1, staleRefused: 1 });
  });

  it('with fencing, still convicts an overlap while the earlier holder believed its lease valid', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 0, 1_000, { mode: 'write', fence: '4' }, 300);
    rwSection(h, 1, 'write', 4, 5, 300, { at: 10 });
    rwSection(h, 2, 'read', 5, 160, 240, { at: 170 });
    expect(checkReadWriteLock(sorted(h), { fencing: true }).verdict).toBe('illegal');
  });

  it('refuses an entry without a mode, naming the event', () => {
    const h = new HistoryBuilder().resource(0, 'rw-enter', { client: 1, fence: '1' });
    expect(() => checkReadWriteLock(h.events)).toThrow(/Event 0: expected "value.mode"/);
    const bad = new HistoryBuilder().resource(0, 'rw-enter', { client: 1, mode: 'append' });
    expect(() => checkReadWriteLock(bad.events)).toThrow(LockHistoryError);
  });
});

describe('checkReadWriteLeases (the clients’ beliefs)', () => {
  it('passes readers believed valid together', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 10, 1_000, { mode: 'read' }, 500);
    grant(h, 2, 'b', 20, 1_000, { mode: 'read' }, 400);
    grant(h, 3, 'c', 501, 1_000, { mode: 'write' }, 600);
    expect(checkReadWriteLeases(sorted(h)).verdict).toBe('ok');
  });

  it('convicts a write grant believed valid beside a read grant', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 10, 1_000, { mode: 'read' }, 500);
    grant(h, 2, 'b', 300, 1_000, { mode: 'write' }, 700);
    const result = checkReadWriteLeases(sorted(h));
    expect(result.verdict).toBe('illegal');
    expect(result.violations[0]).toMatchObject({
      kind: 'writer-overlap',
      view: 'beliefs',
      from: 300,
      to: 500,
    });
  });

  it('refuses a grant that does not say its mode', () => {
    const h = new HistoryBuilder();
    grant(h, 1, 'a', 10, 1_000, {}, 500);
    expect(() => checkReadWriteLeases(sorted(h))).toThrow(/"value.mode"/);
  });
});
