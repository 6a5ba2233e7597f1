import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../src/history/types.js';
import { LockHistoryError } from '../src/lock/errors.js';
import { checkLeases, type LeaseViolation } from '../src/lock/lease.js';

const MS = 1_000_000;

/**
 * One client's grant as the harness records it on a backend whose server counts the TTL from the
 * request (Redis, Redlock): the ok carries `ttlMs` and `sentAt` (ns, when the granting request was
 * handed to the client library), beside `validUntil` and `at`.
 */
function granted(
  index: number,
  process: number,
  grant: string,
  times: { invoke: number; sentAt?: number; answer: number; validUntil: number; ttlMs?: number },
): HistoryEvent[] {
  return [
    { index, time: times.invoke, process, type: 'invoke', f: 'acquire', value: { resource: 'stock' } },
    {
      index: index + 1,
      time: times.answer,
      process,
      type: 'ok',
      f: 'acquire',
      value: {
        grant,
        resource: 'stock',
        fence: String(index),
        validUntil: String(times.validUntil),
        at: String(times.answer),
        ...(times.ttlMs === undefined ? {} : { ttlMs: times.ttlMs }),
        ...(times.sentAt === undefined ? {} : { sentAt: String(times.sentAt) }),
      },
    },
    { index: index + 2, time: times.answer + MS, process, type: 'invoke', f: 'release', value: { grant } },
    { index: index + 3, time: times.answer + 2 * MS, process, type: 'ok', f: 'release', value: null },
  ];
}

const pastSend = (violations: LeaseViolation[]) => violations.filter((v) => v.kind === 'validity-past-send');

describe('checkLeases: validity counted from the request’s send (ttlMs + sentAt recorded)', () => {
  it('passes a grant whose validity counts from its send, and Redlock’s drift-adjusted one below it', () => {
    const history = [
      // Redis: validUntil = sentAt + TTL exactly.
      ...granted(0, 1, 'a', {
        invoke: 0,
        sentAt: 10_000,
        answer: 50 * MS,
        validUntil: 10_000 + 500 * MS,
        ttlMs: 500,
      }),
      // Redlock: sentAt + TTL − drift (1 % + 2 ms).
      ...granted(4, 2, 'b', {
        invoke: 600 * MS,
        sentAt: 600 * MS + 5_000,
        answer: 640 * MS,
        validUntil: 600 * MS + 5_000 + 1_000 * MS - 12 * MS,
        ttlMs: 1_000,
      }),
    ];
    const result = checkLeases(history);
    expect(result.verdict).toBe('ok');
    expect(result.stats.sendChecked).toBe(2);
    expect(result.stats.validityPastSend).toBe(0);
    // The largest validUntil − (sentAt + TTL): exactly on the bound for the first grant.
    expect(result.stats.worstSendMarginNs).toBe(0);
  });

  it('convicts validity counted from the answer: the answer’s trip is counted twice (redis-validity-from-answer)', () => {
    // Sent at 10 ms, answered 40 ms later (a slow link), validity counted from the answer.
    const history = granted(0, 3, 'c3.1', {
      invoke: 9 * MS,
      sentAt: 10 * MS,
      answer: 50 * MS,
      validUntil: 50 * MS + 500 * MS,
      ttlMs: 500,
    });
    const result = checkLeases(history);
    expect(result.verdict).toBe('illegal');
    const [v] = pastSend(result.violations);
    expect(v).toMatchObject({ kind: 'validity-past-send', key: 'stock', index: 1, overNs: 40 * MS });
    expect(v!.message).toBe(
      'grant c3.1 of process 3 (fence 0) claimed validity 40.000 ms past its request’s send + TTL ' +
        '(sent 40.000 ms before its answer, TTL 500 ms): the server counts the TTL from the request, so the ' +
        'key may be gone while the holder still believes',
    );
    expect(result.stats.validityPastSend).toBe(1);
    expect(result.stats.worstSendMarginNs).toBe(40 * MS);
  });

  it('allows only the clock-granularity grace, not latency: 10 µs by default, an option otherwise', () => {
    const within = granted(0, 1, 'a', {
      invoke: 0,
      sentAt: MS,
      answer: 2 * MS,
      validUntil: MS + 500 * MS + 10_000,
      ttlMs: 500,
    });
    expect(checkLeases(within).verdict).toBe('ok');
    const past = granted(0, 1, 'a', {
      invoke: 0,
      sentAt: MS,
      answer: 2 * MS,
      validUntil: MS + 500 * MS + 10_001,
      ttlMs: 500,
    });
    expect(pastSend(checkLeases(past).violations)).toHaveLength(1);
    expect(checkLeases(past, { sendGraceMs: 1 }).verdict).toBe('ok');
    expect(() => checkLeases(past, { sendGraceMs: -1 })).toThrow(LockHistoryError);
  });

  it('judges nothing where the history does not record the send (old histories, ZooKeeper, etcd)', () => {
    // validUntil far beyond invoke + TTL: a session-based lease (its validity is the session's, not a
    // request's TTL) and histories written before ttlMs/sentAt existed are not this rule's business.
    const noSend = granted(0, 1, 'a', { invoke: 0, answer: 5 * MS, validUntil: 10_000 * MS, ttlMs: 500 });
    const noTtl = granted(4, 2, 'b', {
      invoke: 20_000 * MS,
      sentAt: 20_000 * MS,
      answer: 20_001 * MS,
      validUntil: 40_000 * MS,
    });
    const result = checkLeases([...noSend, ...noTtl]);
    expect(result.verdict).toBe('ok');
    expect(result.stats.sendChecked).toBe(0);
    expect(result.stats.worstSendMarginNs).toBeNull();
  });

  it('refuses a malformed ttlMs or sentAt, naming the event', () => {
    const bad = granted(0, 1, 'a', { invoke: 0, sentAt: 0, answer: MS, validUntil: 2 * MS, ttlMs: 500 });
    (bad[1]!.value as Record<string, unknown>).ttlMs = 'soon';
    expect(() => checkLeases(bad)).toThrow(/Event 1: .*ttlMs/);
    const badSent = granted(0, 1, 'a', { invoke: 0, sentAt: 0, answer: MS, validUntil: 2 * MS, ttlMs: 500 });
    (badSent[1]!.value as Record<string, unknown>).sentAt = 'now';
    expect(() => checkLeases(badSent)).toThrow(/Event 1: .*sentAt/);
  });
});
