import { Backoff, fullJitterDelay, monotonicNow } from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('full-jitter backoff', () => {
  it('draws from [0, min(cap, base × 2^attempt))', () => {
    const options = { baseMs: 10, capMs: 100 };
    expect(fullJitterDelay(0, { ...options, random: () => 0.999 })).toBeCloseTo(9.99);
    expect(fullJitterDelay(3, { ...options, random: () => 0.5 })).toBe(40);
    expect(fullJitterDelay(4, { ...options, random: () => 0.5 })).toBe(50);
    expect(fullJitterDelay(1_000, { ...options, random: () => 0.5 })).toBe(50);
    expect(fullJitterDelay(5, { ...options, random: () => 0 })).toBe(0);
  });

  it('spreads delays over the whole window (full jitter, not equal jitter)', () => {
    const delays = Array.from({ length: 2_000 }, () => fullJitterDelay(6, { baseMs: 10, capMs: 500 }));
    expect(Math.min(...delays)).toBeLessThan(50);
    expect(Math.max(...delays)).toBeGreaterThan(450);
    expect(delays.every((d) => d >= 0 && d < 500)).toBe(true);
  });

  it('counts attempts and resets', () => {
    const backoff = new Backoff({ baseMs: 1, capMs: 1_000, random: () => 0.5 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([0.5, 1, 2]);
    expect(backoff.attempt).toBe(3);
    backoff.reset();
    expect(backoff.next()).toBe(0.5);
  });

  it('never sleeps past the deadline', async () => {
    const backoff = new Backoff({ baseMs: 10_000, capMs: 10_000, random: () => 0.99 });
    const deadline = monotonicNow() + 30;
    expect(await backoff.wait(undefined, deadline)).toBe(false);
    expect(monotonicNow()).toBeLessThan(deadline + 1_000);
    expect(await backoff.wait(undefined, deadline)).toBe(false);
  });

  it('stops sleeping when the signal aborts, with its reason', async () => {
    const backoff = new Backoff({ baseMs: 10_000, capMs: 10_000, random: () => 0.99 });
    const reason = new Error('stop');
    const wait = backoff.wait(AbortSignal.timeout(20));
    await expect(wait).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(backoff.wait(AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('refuses bad options with InvalidArgumentError', () => {
    expect(() => fullJitterDelay(-1)).toThrow(/Invalid attempt/);
    expect(() => fullJitterDelay(1.5)).toThrow(/Invalid attempt/);
    expect(() => new Backoff({ baseMs: 0 })).toThrow(/Invalid baseMs/);
    expect(() => new Backoff({ baseMs: 10, capMs: 5 })).toThrow(/Invalid capMs/);
    expect(() => new Backoff({ baseMs: Number.NaN })).toThrow(/Invalid baseMs/);
  });
});
