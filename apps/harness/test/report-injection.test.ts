import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esc, PAGE_CSP, page } from '../src/report/html.js';
import { rebuildSite } from '../src/report/rebuild.js';
import { writeSiteIndex } from '../src/report/site.js';
import type { ReportWarning } from '../src/report/warnings.js';
import { launchChromium } from './support/browser.js';
import { reportsDir } from './support/runs.js';
import { runMeta, runResults, storeRun } from './support/stored-runs.js';

/**
 * A reports directory is something people share: every value the pages print comes from run.json,
 * results.json and history.jsonl, which whoever hands the directory over controls (#14). Markup in
 * every stored field, rendered by `fencekit report` and opened in headless Chromium: no script runs
 * (a script would set a global or retitle the page), the markup shows as text, and the CSP would have
 * stopped a script the escaping missed.
 */
const root = reportsDir();
let browser: Browser;
const warnings: ReportWarning[] = [];

/** Markup that runs script if it reaches the page as markup: each sets `fkRan` and retitles the page. */
function payload(where: string): string {
  const run = `window.fkRan=(window.fkRan||[]).concat('${where}');document.title='PW'+'NED'`;
  return `<img src=x onerror="${run}"><script>${run}</script>"'><svg onload="${run}"></svg></title><b>${where}`;
}

/** The one hostile run: markup in every field that holds text. */
function hostileRun(): void {
  const P = payload;
  const meta = runMeta(P('id'), {
    startedAt: P('startedAt'),
    backend: P('backend'),
    workload: 'cron',
    faults: [P('faults')],
    provider: P('provider'),
    nodes: [P('nodes')],
    faultsApplied: [
      {
        fault: P('fault'),
        target: { node: P('target.node'), halves: [[P('halves.0')], [P('halves.1')]], client: 0 },
        applied: true,
        error: P('fault.error'),
        evidence: { [P('evidence.key')]: P('evidence.value') },
        observed: {
          started: { seen: true, detail: P('observed.started'), atMs: 1 },
          healed: { seen: true, detail: P('observed.healed'), atMs: 2 },
        },
      },
    ],
    problems: [P('problems')],
  });
  const results = runResults(P('results.id'), {
    checkedAt: P('checkedAt'),
    verdict: 'illegal',
    problems: [P('results.problems')],
    checkers: {
      [P('checker')]: {
        verdict: 'illegal',
        violationCount: 1,
        violations: [{ kind: P('violation.kind'), message: P('violation.message'), index: 1 }],
        stats: { [P('stats.key')]: P('stats.value'), nested: { list: [P('stats.list')] } },
        error: P('checker.error'),
        findings: [P('checker.findings')],
      },
      cron: {
        verdict: 'illegal',
        violationCount: 1,
        violations: [{ kind: 'duplicate', from: 10, to: 20, processes: [0, 1] }],
        stats: { ticks: 10, duplicates: 1, duplicatesPer1000Ticks: 100 },
      },
    },
  });
  const event = (index: number, time: number, process: unknown, type: string, f: string, value: unknown) =>
    JSON.stringify({ index, time, process, type, f, value, key: P('key') });
  const history = [
    event(0, 1, 'resource', 'ok', 'init', { stock: P('init') }),
    event(1, 5, 0, 'invoke', 'lock', { name: P('invoke.value') }),
    event(2, 9, 0, 'ok', 'lock', { fence: P('fence'), term: P('term') }),
    event(3, 10, 'nemesis', 'invoke', 'start', { fault: P('nemesis.fault') }),
    event(4, 11, 'nemesis', 'ok', 'start', { fault: P('nemesis.fault'), node: P('nemesis.node') }),
    event(5, 12, 1, 'invoke', P('op'), P('op.value')),
    event(6, 15, 'resource', 'ok', P('write'), { client: 1, accepted: false, fence: P('resource.fence') }),
    event(7, 18, 1, 'info', P('op'), { error: P('op.error') }),
    event(8, 30, 'nemesis', 'ok', 'stop', { fault: 'all' }),
  ];
  // The directory's name is the hostile party's choice too.
  storeRun(root, '"><img src=x onerror=fkRan=1>', { meta, results, history: `${history.join('\n')}\n` });
}

/** A run whose numbers are markup: refused as not what fencekit writes (the old pages printed them raw). */
function numbersAsMarkup(): void {
  const P = payload;
  const base = runResults('n');
  storeRun(root, 'numbers', {
    meta: { ...runMeta('n', { workload: 'cron' }), seed: P('seed') },
    results: {
      ...base,
      verdict: 'illegal',
      checkers: {
        cron: {
          verdict: 'illegal',
          violationCount: P('violationCount'),
          violations: [],
          stats: { ticks: P('ticks'), duplicates: P('duplicates'), duplicatesPer1000Ticks: 1 },
        },
      },
      summary: { ...base.summary, opsPerSecond: P('opsPerSecond') },
    },
  });
}

beforeAll(async () => {
  hostileRun();
  numbersAsMarkup();
  const warn = (w: ReportWarning) => warnings.push(w);
  rebuildSite(root, warn);
  writeSiteIndex(root, { warn });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Opened {
  ran: unknown;
  title: string;
  text: string;
  scripts: number;
  handlers: string[];
  csp: string | null;
  problems: string[];
}

/** Run in the page (as text: the tests are compiled without the DOM's types). */
const READ_PAGE = `(() => ({
  ran: window.fkRan,
  title: document.title,
  text: document.body.textContent ?? '',
  scripts: document.scripts.length,
  handlers: [...document.querySelectorAll('*')].flatMap((el) =>
    [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => el.tagName + ' ' + a.name)),
  csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? null,
}))()`;

/** Opens a page from disk and reads what a script, had one run, would have changed. */
async function open(path: string): Promise<Opened> {
  const tab = await browser.newPage();
  const url = pathToFileURL(path).href;
  const problems: string[] = [];
  tab.on('console', (m) => problems.push(`console ${m.type()}: ${m.text()}`));
  tab.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  tab.on('dialog', (d) => problems.push(`dialog: ${d.message()}`));
  tab.on('request', (r) => {
    if (r.url() !== url) problems.push(`request: ${r.url()}`);
  });
  await tab.goto(url, { waitUntil: 'load', timeout: 30_000 });
  const seen = (await tab.evaluate(READ_PAGE)) as Omit<Opened, 'problems'>;
  await tab.close();
  return { ...seen, problems };
}

function expectInert(seen: Opened): void {
  expect(seen.ran).toBeUndefined();
  expect(seen.title).not.toContain('PWNED');
  expect(seen.scripts).toBe(0);
  expect(seen.handlers).toEqual([]);
  // Nothing was even tried: the CSP reports every script it blocks on the console.
  expect(seen.problems).toEqual([]);
  expect(seen.csp).toBe(PAGE_CSP);
}

const hostileDir = () => readdirSync(root).find((d) => d.startsWith('"'))!;

describe('report pages from hostile stored files, in Chromium', () => {
  it('the site index runs no script and shows the markup as text', async () => {
    const seen = await open(join(root, 'index.html'));
    expectInert(seen);
    for (const field of ['backend', 'faults', 'startedAt'])
      expect(seen.text).toContain(`<img src=x onerror="window.fkRan=(window.fkRan||[]).concat('${field}')`);
  });

  it('the run page runs no script and shows the markup as text', async () => {
    const seen = await open(join(root, hostileDir(), 'index.html'));
    expectInert(seen);
    for (const field of [
      'id',
      'backend',
      'checker',
      'checker.error',
      'checker.findings',
      'stats.value',
      'fault.error',
      'results.problems',
    ])
      expect(seen.text).toContain(`<script>window.fkRan=(window.fkRan||[]).concat('${field}')`);
  });

  it('numbers that are markup are not printed: the run is skipped, with the fields named', () => {
    const numbers = warnings.filter((w) => w.file.includes(join('numbers', '')));
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.every((w) => w.kind === 'skipped-run')).toBe(true);
    expect(numbers.map((w) => w.problem).join(' ')).toMatch(/seed: /);
    for (const w of warnings) expect(w.problem).not.toContain('<');
  });

  it('the CSP alone stops a script that got into the page', async () => {
    const dir = reportsDir();
    const path = join(dir, 'page.html');
    writeFileSync(path, page(esc('t'), payload('raw')));
    const seen = await open(path);
    rmSync(dir, { recursive: true, force: true });
    expect(seen.ran).toBeUndefined();
    expect(seen.title).not.toContain('PWNED');
    expect(seen.problems.join('\n')).toMatch(/Content Security Policy/);
  });
});
