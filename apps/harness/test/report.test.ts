import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recheckRun, storedRuns } from '../src/index.js';
import { launchChromium } from './support/browser.js';
import { type FinishedRun, reportsDir, run } from './support/runs.js';

/**
 * The published pages, opened from disk in headless Chromium: they load with no console errors and
 * show the verdicts the runs produced, in the right matrix cells.
 */
const out = reportsDir();
let browser: Browser;
let convicted: FinishedRun;
let cleared: FinishedRun;

beforeAll(async () => {
  const base = {
    backend: 'memory' as const,
    workload: 'inventory' as const,
    scenario: 'gc-pause' as const,
    clients: 3,
    time: '3s',
    seed: 1,
    out,
  };
  convicted = await run({ ...base, fencing: false });
  cleared = await run({ ...base, fencing: true });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  rmSync(out, { recursive: true, force: true });
});

async function open(path: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  await page.goto(`file://${path}`);
  return { page, errors };
}

describe('report pages', () => {
  it('the run page shows the verdict up top, the timeline with faults, writes and violations, and both plots', async () => {
    expect(convicted.results.verdict).toBe('illegal');
    const { page, errors } = await open(join(convicted.run.dir, 'index.html'));
    expect(await page.locator('#verdict').getAttribute('data-verdict')).toBe('illegal');
    expect(await page.locator('#timeline rect.fault').count()).toBeGreaterThan(0);
    expect(await page.locator('#timeline rect.hold').count()).toBeGreaterThan(0);
    expect(await page.locator('#timeline .write.accepted').count()).toBeGreaterThan(0);
    expect(await page.locator('#timeline .violation').count()).toBeGreaterThan(0);
    expect(await page.locator('svg#latency circle').count()).toBeGreaterThan(0);
    expect(await page.locator('svg#throughput rect').count()).toBeGreaterThan(0);
    expect(await page.locator('#checkers tr[data-checker="fences"] .verdict').textContent()).toBe('illegal');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the timeline draws each fault’s applied window and, apart from it, the window its effect was observed in (#20)', async () => {
    const applied = convicted.run.meta.faultsApplied.filter((f) => f.applied);
    const seen = applied.filter((f) => f.observed?.started?.seen && f.observed.healed?.seen);
    expect(seen.length, JSON.stringify(applied)).toBe(applied.length);
    expect(seen.length).toBeGreaterThan(0);
    const { page, errors } = await open(join(convicted.run.dir, 'index.html'));
    const bands = page.locator('#timeline rect.fault');
    const bars = page.locator('#timeline rect.observed');
    expect(await bars.count()).toBe(seen.length);
    const boxes = async (l: typeof bars) => {
      const all = [];
      for (let i = 0; i < (await l.count()); i++) all.push((await l.nth(i).boundingBox())!);
      return all;
    };
    const applies = await boxes(bands);
    for (const [i, bar] of (await boxes(bars)).entries()) {
      // Drawn on the strip above the lanes, not as another shaded band, and where its fault was applied: it
      // begins after the fault's start (the probe looks once it has acted) and covers most of the band.
      expect(await bars.nth(i).getAttribute('data-fault')).toBe(seen[i]!.fault);
      expect(await bars.nth(i).getAttribute('data-ended')).toBe('true');
      const band = applies.find((b) => bar.x >= b.x - 2 && bar.x <= b.x + b.width);
      expect(band, JSON.stringify({ bar, applies })).toBeDefined();
      expect(bar.y + bar.height).toBeLessThanOrEqual(band!.y + 1);
      expect(bar.width).toBeGreaterThan(band!.width * 0.5);
      expect(bar.x + bar.width).toBeLessThan(band!.x + band!.width * 1.5 + 4);
    }
    expect(await page.locator('#timeline line.observed-edge').count()).toBe(2 * seen.length);
    expect(await page.locator('#timeline text', { hasText: 'observed' }).count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the checkers’ figures read as key: value pairs that wrap within a narrow window', async () => {
    const { page, errors } = await open(join(convicted.run.dir, 'index.html'));
    await page.setViewportSize({ width: 700, height: 900 });
    const figures = page.locator('#checkers tr[data-checker="inventory"] .figures');
    expect(await figures.locator('.kv').count()).toBeGreaterThan(3);
    const text = (await figures.textContent()) ?? '';
    expect(text).toMatch(/initial: 100000/);
    expect(text).not.toMatch(/[{}"]/);
    const box = await page.locator('#checkers').boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(700);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the fenced run shows refused writes and an ok verdict', async () => {
    const { page, errors } = await open(join(cleared.run.dir, 'index.html'));
    expect(await page.locator('#verdict').getAttribute('data-verdict')).toBe('ok');
    expect(await page.locator('#timeline .write.refused').count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the site index is the backend × fault × fencing matrix with the expected verdict cells', async () => {
    const { page, errors } = await open(join(out, 'index.html'));
    const cell = (row: string) =>
      page.locator(`#matrix td[data-row="${row}"][data-col="scenario: gc-pause"]`);
    expect(await cell('memory · fencing off').getAttribute('data-verdict')).toBe('illegal');
    expect(await cell('memory · fencing on').getAttribute('data-verdict')).toBe('ok');
    expect(await page.locator('#matrix a[data-run]').count()).toBe(2);
    const href = await cell('memory · fencing off').locator('a').getAttribute('href');
    expect(href).toBe(`${convicted.run.id}/index.html`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('fencekit check re-judges a stored run to the same verdict', async () => {
    expect(await recheckRun(convicted.run.dir)).toBe('illegal');
    const results = JSON.parse(readFileSync(join(convicted.run.dir, 'results.json'), 'utf8'));
    expect(results.verdict).toBe('illegal');
    expect(storedRuns(out)).toHaveLength(2);
  });
});
