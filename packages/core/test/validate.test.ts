import {
  assertNonNegativeMs,
  assertPositiveMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  DEFAULT_WAIT_MS,
  InvalidArgumentError,
  isFencekitError,
  MAX_TIMER_MS,
  normalizeAcquire,
  normalizeTryAcquire,
} from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('validate', () => {
  it('accepts good resources and refuses empty, long, non-string and control characters', () => {
    expect(() => assertResource('inventory:sku-42')).not.toThrow();
    for (const bad of ['', 'x'.repeat(513), 'a\nb', 'tab\there', 42, null, undefined, {}]) {
      expect(() => assertResource(bad)).toThrow(InvalidArgumentError);
    }
  });

  it('refuses lone surrogates, DEL and C1 controls in resource names (etcd and zk would throw a raw URIError)', () => {
    for (const bad of ['a\uD800', '\uDC00b', 'x\uDBFFy', 'del\u007f', 'csi\u009b[31m']) {
      expect(() => assertResource(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => assertResource('emoji \u{1F512} and accents é')).not.toThrow();
  });

  it('shows a hostile argument escaped and cut short in the message', () => {
    const message = (value: string) => {
      try {
        assertResource(value);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message('csi\u009b[31m')).toContain('"csi\\u009b[31m"');
    expect(message('esc\u001b[2J')).toContain('"esc\\u001b[2J"');
    expect(message('a\uD800')).toContain('"a\\ud800"');
    const long = message('x'.repeat(100_000));
    expect(long.length).toBeLessThan(300);
    expect(long).toContain('(100000 characters)');
  });

  it('names the argument, what it got and what it expected', () => {
    try {
      assertPositiveMs('ttlMs', Number.NaN);
      expect.unreachable();
    } catch (error) {
      expect(isFencekitError(error, 'invalid-argument')).toBe(true);
      expect((error as InvalidArgumentError).argument).toBe('ttlMs');
      expect((error as Error).message).toBe(
        'Invalid ttlMs: got NaN, expected a positive finite number of milliseconds',
      );
    }
    expect(() => assertResource('')).toThrow('Invalid resource: got ""');
    expect(() => assertPositiveMs('ttlMs', 5n)).toThrow('got 5n');
  });

  it('checks durations', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5', undefined]) {
      expect(() => assertPositiveMs('ttlMs', bad)).toThrow(InvalidArgumentError);
    }
    expect(() => assertNonNegativeMs('waitMs', 0)).not.toThrow();
    expect(() => assertNonNegativeMs('waitMs', -0.5)).toThrow(InvalidArgumentError);
    // Past Node's timer limit a timer fires at once: refused rather than ending a wait early.
    expect(() => assertNonNegativeMs('waitMs', MAX_TIMER_MS)).not.toThrow();
    expect(() => assertNonNegativeMs('waitMs', MAX_TIMER_MS + 1)).toThrow('at most 2147483647 ms');
    expect(() => assertPositiveMs('timeoutMs', MAX_TIMER_MS + 1)).toThrow(InvalidArgumentError);
  });

  it('takes TTLs in whole milliseconds only', () => {
    expect(() => assertTtlMs('ttlMs', 1)).not.toThrow();
    expect(() => assertTtlMs('ttlMs', 1500.5)).toThrow(
      'Invalid ttlMs: got 1500.5, expected a positive whole number of milliseconds',
    );
    expect(() => assertTtlMs('ttlMs', MAX_TIMER_MS + 1)).toThrow(InvalidArgumentError);
    expect(() => normalizeAcquire('r', { ttlMs: 10.5 })).toThrow('Invalid ttlMs');
    expect(() => normalizeTryAcquire('r', { ttlMs: 0.5 })).toThrow('Invalid ttlMs');
  });

  it('checks signals', () => {
    expect(() => assertSignal('signal', undefined)).not.toThrow();
    expect(() => assertSignal('signal', new AbortController().signal)).not.toThrow();
    expect(() => assertSignal('signal', { aborted: false })).toThrow('Invalid signal');
  });

  it('normalizes acquire and tryAcquire options', () => {
    expect(normalizeAcquire('r', { ttlMs: 10 })).toEqual({
      resource: 'r',
      ttlMs: 10,
      waitMs: DEFAULT_WAIT_MS,
      signal: undefined,
    });
    expect(normalizeAcquire('r', { ttlMs: 10, waitMs: 0 }).waitMs).toBe(0);
    expect(() => normalizeAcquire('r', undefined)).toThrow('Invalid options');
    expect(() => normalizeAcquire('r', { ttlMs: 10, waitMs: Number.NaN })).toThrow('Invalid waitMs');
    expect(normalizeTryAcquire('r', { ttlMs: 5 })).toEqual({ resource: 'r', ttlMs: 5, signal: undefined });
    expect(() => normalizeTryAcquire('r', null as never)).toThrow('Invalid options');
  });
});
