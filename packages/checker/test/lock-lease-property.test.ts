import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkLeases } from '../src/lock/lease.js';
import { leaseWindows } from '../src/lock/lease-history.js';
import { LeaseHistory } from './lease-history-builder.js';

interface Check {
  at: number;
  held: boolean;
  validUntil: number;
}
interface GrantSpec {
  resource: string;
  start: number;
  validUntil: number;
  checks: Check[];
  release: number | undefined;
}

const grant: fc.Arbitrary<GrantSpec> = fc
  .record({
    resource: fc.constantFrom('r1', 'r2'),
    start: fc.integer({ min: 0, max: 200 }),
    life: fc.integer({ min: -5, max: 100 }),
    checks: fc.array(
      fc.record({
        after: fc.integer({ min: 0, max: 2_500 }),
        held: fc.boolean(),
        more: fc.integer({ min: -200, max: 2_000 }),
      }),
      { maxLength: 4 },
    ),
    release: fc.option(fc.integer({ min: 0, max: 150 }), { nil: undefined }),
  })
  // Times on a 10 ns grid, so that windows often end exactly where another begins (ties).
  .map(({ resource, start, life, checks, release }) => ({
    resource,
    start: 10 * start,
    validUntil: 10 * (start + life),
    // Distinct reading times per grant: one client reads one lease at a time.
    checks: [...new Map(checks.map((c) => [10 * (start + 1 + c.after), c])).entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([at, c]) => ({ at, held: c.held, validUntil: at + 10 * c.more })),
    // Half a grid step off: a release never shares an instant with a reading.
    release: release === undefined ? undefined : 10 * (start + 1 + release) + 5,
  }));

/**
 * The believed-valid window by its definition (the words, and the README's rule that a
 * `held: true` reading believes again), written independently of the checker: from the grant to the
 * release, or to the first `held: false` after the client's latest `held: true` reading before the
 * release, but no further than that reading's validUntil (the grant's own, without one), and never
 * before that reading itself.
 */
function referenceEnd(g: GrantSpec): number {
  const release = g.release ?? Number.POSITIVE_INFINITY;
  const before = g.checks.filter((c) => c.at < release);
  const last = before.filter((c) => c.held).at(-1);
  const since = last?.at ?? Number.NEGATIVE_INFINITY;
  const falseAfter = before.find((c) => !c.held && c.at > since)?.at ?? Number.POSITIVE_INFINITY;
  const end = Math.min(release, falseAfter);
  const belief = last ? Math.max(last.validUntil, last.at) : Math.max(g.validUntil, g.start);
  return Math.min(end, belief);
}

function toHistory(grants: GrantSpec[]): LeaseHistory {
  const h = new LeaseHistory();
  grants.forEach((g, i) => {
    h.grant(i, `g${i}`, g.start, g.validUntil, g.resource);
    for (const c of g.checks) h.check(i, `g${i}`, c.at, c.held, c.held ? c.validUntil : undefined);
    if (g.release !== undefined) h.release(i, `g${i}`, g.release);
  });
  return h;
}

describe('checkLeases against a quadratic reference', () => {
  it('finds exactly the overlapping pairs of believed-valid windows', () => {
    fc.assert(
      fc.property(fc.array(grant, { minLength: 1, maxLength: 25 }), (grants) => {
        const history = toHistory(grants).sorted();
        const ends = grants.map(referenceEnd);
        const windows = leaseWindows(history).windows;
        for (const w of windows) {
          const end = ends[Number(w.grant.slice(1))]!;
          expect(w.end > w.start, `window of ${w.grant} empty?`).toBe(end > w.start);
          if (end > w.start) expect(w.end, `end of ${w.grant}`).toBe(end);
        }
        const expected: string[] = [];
        for (let i = 0; i < grants.length; i++) {
          for (let j = i + 1; j < grants.length; j++) {
            const [a, b] = [grants[i]!, grants[j]!];
            if (a.resource !== b.resource) continue;
            const from = Math.max(a.start, b.start);
            const to = Math.min(ends[i]!, ends[j]!);
            if (ends[i]! > a.start && ends[j]! > b.start && from < to)
              expected.push([`g${i}`, `g${j}`].sort().join('+'));
          }
        }
        const result = checkLeases(history, { maxViolations: 10_000 });
        const found = result.violations
          .flatMap((v) => (v.kind === 'overlap' ? [[v.first.grant, v.second.grant].sort().join('+')] : []))
          .sort();
        expect(found).toEqual(expected.sort());
        expect(result.stats.overlaps).toBe(expected.length);
      }),
      { numRuns: 1_000 },
    );
  });
});
