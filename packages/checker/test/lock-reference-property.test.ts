import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../src/history/types.js';
import {
  type CronResult,
  checkCron,
  checkElection,
  checkFences,
  checkInventory,
  checkMutex,
  type ElectionResult,
  type FenceResult,
  type InventoryResult,
  type MutexResult,
} from '../src/lock/index.js';
import {
  referenceCron,
  referenceElection,
  referenceFences,
  referenceInventory,
  referenceMutex,
} from './lock-reference.js';

/**
 * Every lock checker against its reference (test/lock-reference.ts, written from the README's exact
 * semantics) over random histories: few distinct times (so ties are common), lines shuffled in the
 * file, three resources, four clients, refusals, crashed leaves, sales never completed, and every
 * kind of line in every history (each checker must ignore the others' lines). Runs are counted, not
 * timed, and stay within a few seconds each in CI.
 */
const RUNS = 3_000;

const KEYS = ['', '', 'a', 'b'] as const;

const resourceLine = fc.record({
  f: fc.constantFrom('enter', 'leave', 'enter', 'leave', 'claim', 'run', 'read', 'write'),
  key: fc.constantFrom(...KEYS),
  client: fc.integer({ min: 1, max: 4 }),
  time: fc.integer({ min: 0, max: 12 }),
  fence: fc.option(fc.constantFrom<string | number>('1', '2', '3', '4', 2, 3, '03'), { nil: undefined }),
  accepted: fc.boolean(),
  acceptedGiven: fc.boolean(),
  crashed: fc.boolean(),
  term: fc.constantFrom<string | number>(1, 2, 3, '2', '03'),
  tick: fc.constantFrom<string | number>(
    0,
    1,
    2,
    '1',
    '01',
    '002',
    't1',
    '9007199254740993',
    '9007199254740992',
  ),
  job: fc.constantFrom(undefined, '', 'j'),
  stock: fc.integer({ min: -1, max: 5 }),
  /** Most lines of a history are of its focus kind, so each checker meets dense histories too. */
  focused: fc.integer({ min: 0, max: 9 }),
});

type Spec = ReturnType<typeof resourceLine.generate>['value'];

function lineValue(s: Spec): Record<string, unknown> {
  const fence = s.fence === undefined ? {} : { fence: s.fence };
  switch (s.f) {
    case 'enter':
      return { client: s.client, ...fence, accepted: s.accepted };
    case 'leave':
      return { client: s.client, ...fence, ...(s.crashed ? { crashed: true } : {}) };
    case 'claim':
      return { client: s.client, term: s.term, ...fence, accepted: s.accepted };
    case 'run':
      return {
        client: s.client,
        tick: s.tick,
        ...(s.job === undefined ? {} : { job: s.job }),
        ...fence,
        ...(s.acceptedGiven ? { accepted: s.accepted } : {}),
      };
    case 'read':
      return { client: s.client, stock: s.stock, ...fence };
    default:
      return { client: s.client, stock: s.stock, ...fence, accepted: s.accepted };
  }
}

/**
 * A client's grant (an acquire's `ok`): few grant ids and fences, so fences are often granted twice and one grant
 * is often recorded twice (a reclaim); some carry no usable fence or grant id.
 */
const grantLine = fc.record({
  process: fc.integer({ min: 1, max: 4 }),
  time: fc.integer({ min: 0, max: 12 }),
  grant: fc.constantFrom<string | number | undefined>('g1', 'g2', 'g3', 4, '4', undefined),
  fence: fc.constantFrom<string | number | undefined>('1', '2', '02', 2, 3, 'x', 2.5, undefined),
  resource: fc.constantFrom(undefined, 'a', ''),
  key: fc.constantFrom(...KEYS),
});

/** A step of the recording: a resource line, a client's grant, or the next `buy` event of a client process. */
const step = fc.oneof(
  { weight: 3, arbitrary: resourceLine.map((spec) => ({ spec })) },
  { weight: 1, arbitrary: grantLine.map((grant) => ({ grant })) },
  {
    weight: 1,
    arbitrary: fc.record({
      buyer: fc.integer({ min: 11, max: 13 }),
      outcome: fc.constantFrom('ok', 'ok', 'fail', 'info'),
      key: fc.constantFrom(undefined, undefined, 'a', ''),
      time: fc.integer({ min: 0, max: 12 }),
    }),
  },
);

const randomHistories = fc
  .record({
    focus: fc.constantFrom(
      'enter' as const,
      'claim' as const,
      'run' as const,
      'write' as const,
      'mixed' as const,
    ),
    steps: fc.array(step, { maxLength: 40, size: 'max' }),
    inits: fc.array(
      fc.record({
        key: fc.constantFrom(...KEYS),
        stock: fc.integer({ min: 2, max: 5 }),
        time: fc.integer({ min: 0, max: 12 }),
      }),
      { maxLength: 2 },
    ),
    order: fc.infiniteStream(fc.nat()),
  })
  .map(({ focus, steps, inits, order }) => {
    const lines: Omit<HistoryEvent, 'index'>[] = [];
    const seen = new Set<string>();
    for (const init of inits) {
      // One init per resource: a second one is malformed input, tested on its own.
      if (seen.has(init.key)) continue;
      seen.add(init.key);
      lines.push(resourceEvent(init.time, 'init', { stock: init.stock }, init.key));
    }
    const open = new Set<number>();
    for (const s of steps) {
      if ('spec' in s) {
        const spec =
          focus !== 'mixed' && s.spec.focused < 7 ? { ...s.spec, f: focusKind(focus, s.spec) } : s.spec;
        lines.push(resourceEvent(spec.time, spec.f, lineValue(spec), spec.key));
        continue;
      }
      if ('grant' in s) {
        const g = s.grant;
        lines.push({
          time: g.time,
          process: g.process,
          type: 'ok',
          f: 'acquire',
          value: {
            ...(g.grant === undefined ? {} : { grant: g.grant }),
            ...(g.fence === undefined ? {} : { fence: g.fence }),
            ...(g.resource === undefined ? {} : { resource: g.resource }),
          },
          ...(g.key === '' ? {} : { key: g.key }),
        });
        continue;
      }
      const type = open.has(s.buyer) ? s.outcome : 'invoke';
      if (type === 'invoke') open.add(s.buyer);
      else open.delete(s.buyer);
      lines.push({
        time: s.time,
        process: s.buyer,
        type: type as HistoryEvent['type'],
        f: 'buy',
        value: null,
        ...(s.key === undefined ? {} : { key: s.key }),
      });
    }
    // Indices in recording order; the file order is shuffled.
    const events = lines.map((line, index) => ({ ...line, index }) as HistoryEvent);
    const keys = events.map(() => order.next().value as number);
    return events
      .map((e, i) => [keys[i] as number, e] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, e]) => e);
  });

/** A mutex history needs its leaves as much as its enters, an inventory its reads beside its writes. */
function focusKind(focus: 'enter' | 'claim' | 'run' | 'write', spec: Spec): Spec['f'] {
  if (focus === 'enter') return spec.focused % 2 === 0 ? 'enter' : 'leave';
  if (focus === 'write') return spec.focused % 3 === 0 ? 'read' : 'write';
  return focus;
}

function resourceEvent(
  time: number,
  f: string,
  value: Record<string, unknown>,
  key: string,
): Omit<HistoryEvent, 'index'> {
  return { time, process: 'resource', type: 'ok', f, value, ...(key === '' ? {} : { key }) };
}

const pair = (a: unknown, b: unknown) => [String(a), String(b)].sort().join('-');

function mutexSeen(r: MutexResult) {
  if (r.verdict === 'unknown') return { verdict: r.verdict, violations: [], counts: {} };
  const { sections, refused, reentries, unmatchedLeaves, open } = r.stats;
  return {
    verdict: r.verdict,
    violations: r.violations
      .map((v) => `overlap ${v.key} ${pair(v.first.client, v.second.client)} ${v.from} ${v.to}`)
      .sort(),
    counts: { sections, refused, reentries, unmatchedLeaves, open },
  };
}

function fenceSeen(r: FenceResult) {
  const { accepted, staleRefused, freshRefused, unfenced, grants } = r.stats;
  return {
    verdict: r.verdict,
    violations: r.violations.map((v) => `${v.kind} ${v.index}`).sort(),
    counts: { accepted, staleRefused, freshRefused, unfenced, grants },
  };
}

function electionSeen(r: ElectionResult) {
  if (r.verdict === 'unknown') return { verdict: r.verdict, violations: [], counts: {} };
  const { claims, refused, staleRefused, reigns } = r.stats;
  return {
    verdict: r.verdict,
    violations: r.violations
      .map((v) =>
        v.kind === 'deposed-claim'
          ? `deposed-claim ${v.index} ${v.term} ${v.highestTerm}`
          : `two-leaders ${v.key} ${pair(v.first.client, v.second.client)} ${v.from} ${v.to}`,
      )
      .sort(),
    counts: { claims, refused, staleRefused, reigns },
  };
}

function cronSeen(r: CronResult) {
  if (r.verdict === 'unknown') return { verdict: r.verdict, violations: [], counts: {} };
  const { ticks, runs, refused, duplicates } = r.stats;
  return {
    verdict: r.verdict,
    violations: r.violations
      .map((v) => `duplicate-run ${JSON.stringify([v.key, v.job, v.tick])} ${v.indices.join(',')}`)
      .sort(),
    counts: { ticks, runs, refused, duplicates },
  };
}

function inventorySeen(r: InventoryResult) {
  if (r.verdict === 'unknown' && r.nothingToCheck !== undefined) {
    return { verdict: r.verdict, violations: [], counts: {} };
  }
  const counts: Record<string, number> = {};
  for (const [key, s] of Object.entries(r.stats)) {
    counts[`${key}.final`] = s.final;
    counts[`${key}.sales`] = s.sales;
  }
  return {
    verdict: r.verdict,
    violations: r.violations.map((v) => `${v.kind} ${v.key} ${v.index ?? 'total'}`).sort(),
    counts,
  };
}

describe('lock checkers against their simple references', () => {
  it('mutex', () => {
    fc.assert(
      fc.property(randomHistories, (h) => {
        expect(mutexSeen(checkMutex(h, { maxViolations: 10_000 }))).toEqual(referenceMutex(h));
      }),
      { numRuns: RUNS },
    );
  });

  it('fences', () => {
    fc.assert(
      fc.property(randomHistories, (h) => {
        expect(fenceSeen(checkFences(h))).toEqual(referenceFences(h));
      }),
      { numRuns: RUNS },
    );
  });

  it('election', () => {
    fc.assert(
      fc.property(randomHistories, (h) => {
        expect(electionSeen(checkElection(h))).toEqual(referenceElection(h));
      }),
      { numRuns: RUNS },
    );
  });

  it('cron', () => {
    fc.assert(
      fc.property(randomHistories, (h) => {
        expect(cronSeen(checkCron(h))).toEqual(referenceCron(h));
      }),
      { numRuns: RUNS },
    );
  });

  it('inventory, with and without a starting stock given', () => {
    fc.assert(
      fc.property(
        randomHistories,
        fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
        (h, initialStock) => {
          const options = initialStock === undefined ? {} : { initialStock };
          expect(inventorySeen(checkInventory(h, options))).toEqual(referenceInventory(h, initialStock));
        },
      ),
      { numRuns: RUNS },
    );
  });
});
