import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeSiteIndex } from '../src/index.js';
import type { RunMeta, RunResults } from '../src/run/output.js';
import { suiteResults } from '../src/suite/results.js';
import type { SuiteOutcome } from '../src/suite/suite.js';
import { runMeta, runResults, storeRun } from './support/stored-runs.js';

/**
 * The per-cell evidence (conviction rate, 95 % Wilson interval, median time to the first violation) as
 * the site and the suite's results.json show it, from stored runs written here by hand.
 */
const root = mkdtempSync(join(tmpdir(), 'fencekit-site-evidence-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function store(
  id: string,
  meta: Partial<RunMeta>,
  verdict: RunResults['verdict'],
  firstViolationMs: number | null,
): SuiteOutcome {
  const full = runMeta(id, {
    startedAt: `2026-12-03T07:00:0${id.length % 10}.000Z`,
    backend: 'zk',
    workload: 'inventory',
    faults: ['stall-holder'],
    scenario: null,
    fencing: true,
    seed: 1,
    clients: 3,
    ...meta,
  });
  const base = runResults(id);
  const results = runResults(id, {
    verdict,
    summary: { ...base.summary, opsPerSecond: 10, firstViolationMs },
  });
  const dir = storeRun(root, id, { meta: full, results });
  return {
    entry: {
      options: { backend: full.backend as 'zk', workload: full.workload, fault: full.faults.join(',') },
      expect: 'ok',
      why: '',
    },
    run: { id, dir, verdict, meta: full },
    agrees: true,
  };
}

const outcomes = [
  store('a', { seed: 1 }, 'illegal', 1_200),
  store('bb', { seed: 2 }, 'illegal', 3_400),
  store('ccc', { seed: 3 }, 'ok', null),
  store('dddd', { seed: 4 }, 'unknown', null),
  // A hostile value in every field the site prints: it must come out as text.
  store(
    'eeeee',
    { backend: '<img src=x onerror=alert(1)>', faults: ["'&", '"><script>x()</script>'] },
    'illegal',
    5,
  ),
];

describe('evidence per cell', () => {
  it('results.json groups the suite by cell, with the rate, the Wilson interval and the median time', () => {
    const results = suiteResults(outcomes);
    const zk = results.cells.find((c) => c.backend === 'zk')!;
    expect(zk).toMatchObject({
      faults: 'stall-holder',
      fencing: true,
      runs: 4,
      judged: 3,
      convicted: 2,
      unknown: 1,
      medianFirstViolationMs: 2_300,
      timedConvictions: 2,
      notRun: 0,
    });
    expect(zk.rate).toBeCloseTo(2 / 3, 10);
    expect(zk.interval!.low).toBeCloseTo(0.2077, 4);
    expect(zk.interval!.high).toBeCloseTo(0.9385, 4);
    expect(results.interval).toBe('Wilson score, 95 %');
    // What is not known is written as null, not left out of the file.
    const clean = suiteResults([outcomes[2]!]).cells[0]!;
    expect(JSON.parse(JSON.stringify(clean))).toMatchObject({ convicted: 0, medianFirstViolationMs: null });
    expect(suiteResults([outcomes[3]!]).cells[0]).toMatchObject({ rate: null, interval: null });
    expect(results.firstViolationMs).toMatch(/told to start/);
  });

  it('the site shows each cell’s figures, escaped', () => {
    const html = readFileSync(writeSiteIndex(root), 'utf8');
    const row = /<tr data-cell="zk · fencing on\|stall-holder"[^>]*>.*?<\/tr>/.exec(html)?.[0] ?? '';
    expect(row).toContain('data-convicted="2" data-judged="3"');
    expect(row).toContain('2/3');
    expect(row).toContain('20.8 % – 93.9 %');
    expect(row).toContain('2.3 s');
    expect(html).toContain('convicted 2/3 (67 %, 95 % CI 21–94 %) · first violation 2.3 s');
    expect(html).not.toMatch(/<img|<script>x|"><script/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('&#39;&amp;');
  });
});
