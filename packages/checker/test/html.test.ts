import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOperations, parseHistoryJsonl } from '../src/history/index.js';
import type { Operation } from '../src/history/types.js';
import { renderHtml } from '../src/html/index.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { checkFences, checkMutex } from '../src/lock/index.js';
import { modelByName } from '../src/models/index.js';
import { runCheckers } from '../src/verdict.js';
import { launchChromium, openHtml } from './html-browser.js';
import { HistoryBuilder } from './lock-history.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

function lockHistory() {
  return new HistoryBuilder()
    .client(0, 'nemesis' as never, 'info', 'pause', { process: 2 })
    .section(1, 1, 10, 30)
    .section(2, 2, 20, 40)
    .section(3, 3, 50, 60)
    .resource(55, 'write', { client: 1, fence: '1', stock: 3, accepted: true })
    .resource(56, 'write', { client: 2, fence: '2', stock: 3, accepted: false }).events;
}

// Chromium on a shared 2-core machine can be slow; these budgets bound each test, they are not targets.
describe('renderHtml in headless Chromium', { timeout: 120_000 }, () => {
  it('draws lock lanes per client with holding intervals, overlaps and a stale write marked', async () => {
    const history = lockHistory();
    const result = await runCheckers({ mutex: checkMutex, fence: checkFences }, history);
    const html = renderHtml(result, history, { title: 'mutex <run 1>' });
    const loaded = await openHtml(browser, html);
    try {
      const { page, problems } = loaded;
      expect(problems).toEqual([]);
      expect(await page.locator('body[data-verdict="illegal"]').count()).toBe(1);
      expect(await page.title()).toBe('mutex <run 1> — illegal');
      expect(await page.locator('figure.lanes').getAttribute('data-lanes')).toBe('3');
      expect(await page.locator('g.lane[data-client]:not(.nemesis)').count()).toBe(3);
      expect(await page.locator('rect.hold').count()).toBe(3);
      expect(await page.locator('rect.overlap[data-check="mutex"]').count()).toBe(1);
      expect(await page.locator('circle.violation-mark[data-check="fence"]').count()).toBe(1);
      expect(await page.locator('g.nemesis line.fault').count()).toBe(1);
      await page.locator('tr.violation[data-check="mutex"]').first().click();
      expect(await page.locator('rect.overlap.hl').count()).toBe(1);
      const data = JSON.parse((await page.locator('#fencekit-data').textContent()) ?? '');
      expect(data.checks.mutex.stats.overlaps).toBe(1);
    } finally {
      await loaded.close();
    }
  });

  it('draws per-process timelines with the partial linearization and the unplaced ops highlighted', async () => {
    const ops: Operation[] = [
      { id: 0, process: 0, key: 'x', f: 'write', input: 1, output: null, call: 0, ret: 10, status: 'ok' },
      { id: 1, process: 1, key: 'x', f: 'read', input: null, output: 1, call: 12, ret: 20, status: 'ok' },
      { id: 2, process: 2, key: 'x', f: 'read', input: null, output: 7, call: 22, ret: 30, status: 'ok' },
      {
        id: 3,
        process: 0,
        key: 'x',
        f: 'write',
        input: 2,
        output: null,
        call: 25,
        ret: Number.POSITIVE_INFINITY,
        status: 'info',
      },
    ];
    const result = {
      verdict: 'illegal' as const,
      partitions: [{ key: 'x', verdict: 'illegal' as const, linearization: [0, 1], unplaced: [2] }],
    };
    const loaded = await openHtml(browser, renderHtml(result, ops, { timeUnit: 'index' }));
    try {
      const { page, problems } = loaded;
      expect(problems).toEqual([]);
      expect(await page.locator('section.partition[data-verdict="illegal"]').count()).toBe(1);
      expect(await page.locator('g.lane[data-process]').count()).toBe(3);
      expect(await page.locator('g.op').count()).toBe(4);
      expect(await page.locator('g.op.linearized').count()).toBe(2);
      expect(await page.locator('g.op.unplaced').count()).toBe(1);
      expect(await page.locator('g.op.unplaced').getAttribute('data-op')).toBe('2');
      expect(await page.locator('g.op.open').count()).toBe(1);
      expect(await page.locator('ol.linearization li').count()).toBe(2);
      await page.locator('ul.unplaced-list li').first().hover();
      expect(await page.locator('g.op.hl').getAttribute('data-op')).toBe('2');
    } finally {
      await loaded.close();
    }
  });

  it('draws a real harness mutex history: four client lanes, the nemesis lane and five overlaps', async () => {
    const file = new URL(
      './lock-fixtures/redis-mutex-pause-client+pause-server-unfenced.jsonl',
      import.meta.url,
    );
    const history = parseHistoryJsonl(await readFile(file, 'utf8'));
    const result = await runCheckers({ mutex: checkMutex, fence: checkFences }, history);
    const loaded = await openHtml(browser, renderHtml(result, history, { title: 'redis mutex, unfenced' }));
    try {
      const { page, problems } = loaded;
      expect(problems).toEqual([]);
      expect(await page.locator('body[data-verdict="illegal"]').count()).toBe(1);
      expect(await page.locator('figure.lanes').getAttribute('data-lanes')).toBe('4');
      expect(await page.locator('g.lane.nemesis line.fault').count()).toBeGreaterThan(0);
      expect(await page.locator('rect.hold').count()).toBe(30);
      expect(await page.locator('rect.overlap[data-check="mutex"]').count()).toBe(5);
    } finally {
      await loaded.close();
    }
  });

  it('draws a window around the first violation of a history too long to draw whole', async () => {
    const h = new HistoryBuilder();
    for (let i = 0; i < 6000; i++) {
      const start = i * 100;
      // Section 5500 starts before its predecessor left: the one overlap.
      h.section(i % 4, i + 1, i === 5500 ? start - 50 : start, start + 80);
    }
    const result = await runCheckers({ mutex: checkMutex }, h.events);
    const loaded = await openHtml(browser, renderHtml(result, h.events));
    try {
      const { page, problems } = loaded;
      expect(problems).toEqual([]);
      expect(await page.locator('rect.hold').count()).toBe(5000);
      expect(await page.locator('rect.overlap').count()).toBe(1);
      expect(await page.locator('figure.lanes .note').textContent()).toMatch(
        /5000 of 6000 critical sections/,
      );
      const fences = await page
        .locator('rect.hold')
        .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-fence'))));
      expect(Math.min(...fences)).toBeLessThan(5501);
      expect(Math.max(...fences)).toBeGreaterThan(5501);
    } finally {
      await loaded.close();
    }
  });

  it('renders an ok result and an unknown one with its error', async () => {
    const okPage = await openHtml(
      browser,
      renderHtml(checkMutex(lockHistory().slice(0, 3)), lockHistory().slice(0, 3)),
    );
    try {
      expect(okPage.problems).toEqual([]);
      expect(await okPage.page.locator('body[data-verdict="ok"]').count()).toBe(1);
    } finally {
      await okPage.close();
    }
    const crashed = await runCheckers({
      broken: () => {
        throw new Error('no </script> here');
      },
    });
    const unknownPage = await openHtml(browser, renderHtml(crashed, []));
    try {
      expect(unknownPage.problems).toEqual([]);
      expect(await unknownPage.page.locator('body[data-verdict="unknown"]').count()).toBe(1);
      expect(await unknownPage.page.locator('.error').textContent()).toBe('Error: no </script> here');
    } finally {
      await unknownPage.close();
    }
  });
});

describe('renderHtml of real linearizability checks', { timeout: 120_000 }, () => {
  const data = '/work/shared/data/porcupine/jepsen';

  it.each([
    ['etcd_000.log', 'illegal'],
    ['etcd_101.log', 'ok'],
  ] as const)('draws %s (%s) with its linearization or largest partial one', async (file, verdict) => {
    const ops = await loadOperations(`${data}/${file}`);
    const result = checkLinearizable(ops, modelByName('cas-register')!, {
      diagnose: true,
      timeoutMs: 20_000,
    });
    expect(result.verdict).toBe(verdict);
    const loaded = await openHtml(browser, renderHtml(result, ops, { title: file, timeUnit: 'index' }));
    try {
      const { page, problems } = loaded;
      expect(problems).toEqual([]);
      expect(await page.locator(`body[data-verdict="${verdict}"]`).count()).toBe(1);
      expect(await page.locator('g.op').count()).toBe(result.partitions[0]?.opIds.length);
      const placed = result.partitions[0]?.linearization ?? result.partitions[0]?.witness?.prefix ?? [];
      expect(await page.locator('g.op.linearized').count()).toBe(placed.length);
      const unplaced = await page.locator('g.op.unplaced').count();
      if (verdict === 'illegal') expect(unplaced).toBeGreaterThan(0);
      else expect(unplaced).toBe(0);
    } finally {
      await loaded.close();
    }
  });
});
