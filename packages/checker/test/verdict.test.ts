import { describe, expect, it } from 'vitest';
import { composeVerdicts, runCheckers } from '../src/verdict.js';

describe('composeVerdicts', () => {
  it('orders illegal over unknown over ok', () => {
    expect(composeVerdicts([])).toBe('ok');
    expect(composeVerdicts(['ok', 'ok'])).toBe('ok');
    expect(composeVerdicts(['ok', 'unknown', 'ok'])).toBe('unknown');
    expect(composeVerdicts(['unknown', 'illegal', 'ok'])).toBe('illegal');
  });
});

describe('runCheckers', () => {
  const pass = () => ({ verdict: 'ok' as const, violations: [], stats: {} });

  it('passes the history to each checker and composes their verdicts', async () => {
    const seen: unknown[] = [];
    const result = await runCheckers(
      {
        a: (h: number[]) => {
          seen.push(h);
          return pass();
        },
        b: async () => ({ verdict: 'illegal' as const, violations: ['x'], stats: {} }),
      },
      [1, 2],
    );
    expect(seen).toEqual([[1, 2]]);
    expect(result.verdict).toBe('illegal');
    expect(result.results.b?.violations).toEqual(['x']);
  });

  it('turns a throwing, rejecting or verdict-less checker into unknown with the error, never ok', async () => {
    const result = await runCheckers({
      fine: pass,
      throws: () => {
        throw new RangeError('boom');
      },
      rejects: () => Promise.reject(new Error('late boom')),
      empty: () => ({}) as never,
    });
    expect(result.verdict).toBe('unknown');
    expect(result.results.throws).toMatchObject({ verdict: 'unknown', error: 'RangeError: boom' });
    expect(result.results.rejects).toMatchObject({ verdict: 'unknown', error: 'Error: late boom' });
    expect(result.results.empty?.error).toMatch(/no valid verdict/);
  });
});
