import { spawn } from 'node:child_process';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { recheckRun } from '../src/check/recheck.js';
import { page } from '../src/report/html.js';
import { FENCEKIT_PAGE_MARK } from '../src/report/ownership.js';
import { rebuildSite } from '../src/report/rebuild.js';
import { UnsafeWriteError } from '../src/report/safe-write.js';
import { writeSiteIndex } from '../src/report/site.js';
import { readRunHistory, readRunMeta, StoredRunError } from '../src/report/stored-run.js';
import type { ReportWarning } from '../src/report/warnings.js';
import { runMeta, runResults, storeRun } from './support/stored-runs.js';

/**
 * Stored run files that are not files fencekit wrote (#14 review): pseudo files under /proc that claim
 * size 0 and never end or never answer, links to files fencekit did not make, a violation listing
 * millions of processes. `check` and `report` answer each with a typed error or a skipped run, in
 * bounded time and memory, and never write through a link.
 */
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});
function site(): string {
  const root = mkdtempSync(join(tmpdir(), 'fencekit-hostile-'));
  roots.push(root);
  return root;
}

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** The built CLI, killed after `limitMs` (a hang shows as code null). */
function fencekit(args: string[], limitMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      if (stderr.length < 10_000) stderr += d;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stderr });
    });
  });
}

describe('stored files under /proc (HIGH 5)', () => {
  it('a history.jsonl linked to /proc/self/pagemap or /proc/kmsg: check is bad input, report skips the run', async () => {
    for (const target of ['/proc/self/pagemap', '/proc/kmsg']) {
      const root = site();
      const dir = storeRun(root, 'r', { meta: runMeta('r'), results: runResults('r') });
      rmSync(join(dir, 'history.jsonl'));
      symlinkSync(target, join(dir, 'history.jsonl'));
      // The old reader took size 0 for the truth: pagemap grew the heap by 140 MB/s, kmsg blocked for good.
      const checked = await fencekit(['check', dir], 15_000);
      expect(checked.code, `check, ${target}: ${checked.stderr}`).toBe(3);
      expect(checked.stderr).toMatch(/history\.jsonl: not a file fencekit wrote/);
      const reported = await fencekit(['report', '--out', root], 15_000);
      expect(reported.stderr).toMatch(/warning: skipped .*history\.jsonl: not a file fencekit wrote/);
    }
  }, 120_000);

  it('run.json and results.json linked to /proc are refused as not regular stored files, without reading them', () => {
    const root = site();
    const dir = storeRun(root, 'r', { meta: runMeta('r'), results: runResults('r') });
    rmSync(join(dir, 'run.json'));
    symlinkSync('/proc/self/pagemap', join(dir, 'run.json'));
    const error = (() => {
      try {
        readRunMeta(join(dir, 'run.json'));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(StoredRunError);
    expect((error as StoredRunError).problem).toMatch(/not a file fencekit wrote/);
  });
});

describe('files check writes (MEDIUM 7)', () => {
  const victimText = 'precious user data\n';
  /** A run directory whose results.json (or page) is another name for `victim`, made by `link`. */
  function linkedRun(file: 'results.json' | 'index.html', link: 'symbolic' | 'hard') {
    const root = site();
    const dir = storeRun(root, 'r', { meta: runMeta('r') });
    const victim = join(root, 'victim.txt');
    // The page victim carries fencekit's mark: a link, not the content, is what makes it not fencekit's.
    writeFileSync(victim, file === 'index.html' ? page('victim', victimText) : victimText);
    const before = readFileSync(victim, 'utf8');
    (link === 'symbolic' ? symlinkSync : linkSync)(victim, join(dir, file));
    return { dir, victim, before };
  }

  for (const link of ['symbolic', 'hard'] as const) {
    it(`a results.json that is a ${link} link is refused; the file it names is untouched`, async () => {
      const { dir, victim, before } = linkedRun('results.json', link);
      const error = await recheckRun(dir, () => {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsafeWriteError);
      expect((error as UnsafeWriteError).file).toBe(join(dir, 'results.json'));
      expect(readFileSync(victim, 'utf8')).toBe(before);
    });

    it(`a run page that is a ${link} link is left alone with a warning; the file it names is untouched`, async () => {
      const { dir, victim, before } = linkedRun('index.html', link);
      const warnings: ReportWarning[] = [];
      await recheckRun(dir, (w) => warnings.push(w));
      expect(readFileSync(victim, 'utf8')).toBe(before);
      expect(warnings).toContainEqual({
        kind: 'foreign-page',
        file: join(dir, 'index.html'),
        problem: expect.stringMatching(/link|names/),
      });
    });
  }

  it('writes by renaming a fresh file over the old one, and leaves no temporary file behind', async () => {
    const root = site();
    const dir = storeRun(root, 'r', { meta: runMeta('r'), results: runResults('r') });
    await recheckRun(dir, () => {});
    expect(readdirSync(dir).sort()).toEqual(['history.jsonl', 'index.html', 'results.json', 'run.json']);
    expect(lstatSync(join(dir, 'results.json')).nlink).toBe(1);
  });
});

describe('a violation listing a million processes (MEDIUM 10)', () => {
  it('the run page shows the first ones and how many more, and the other runs are still built', () => {
    const root = site();
    const many = 1_000_000;
    const violation = { kind: 'overlap', from: 1, to: 2, processes: new Array<number>(many).fill(0) };
    const results = runResults('big', {
      verdict: 'illegal',
      checkers: { mutex: { verdict: 'illegal', violationCount: 1, violations: [violation], stats: {} } },
    });
    storeRun(root, 'big', { meta: runMeta('big', { startedAt: '2026-12-03T08:00:00.000Z' }), results });
    storeRun(root, 'good', { meta: runMeta('good'), results: runResults('good') });
    const warnings: ReportWarning[] = [];
    // The old page drew one band per listed process and printed the list whole: 5 million took the
    // site down ("Invalid string length"), a million made a page of hundreds of megabytes.
    expect(rebuildSite(root, (w) => warnings.push(w))).toBe(2);
    expect(warnings).toEqual([]);
    const page = readFileSync(join(root, 'big', 'index.html'), 'utf8');
    expect(page.length).toBeLessThan(1_000_000);
    expect(page).toContain(`… and ${many - 20} more`);
  });
});

describe('whose index.html check may rewrite (LOW 12)', () => {
  it('only a page that begins as fencekit writes one: quoting its title or its mark is not enough', async () => {
    for (const quoted of [
      '<title>fencekit: ',
      '<title>fencekit consistency report</title>',
      FENCEKIT_PAGE_MARK,
    ]) {
      const root = site();
      const foreign = `<!doctype html><html><head><title>My notes</title></head><body><pre>grep for ${quoted}</pre>my notes</body></html>`;
      writeFileSync(join(root, 'index.html'), foreign);
      const dir = storeRun(root, 'r', { meta: runMeta('r') });
      const warnings: ReportWarning[] = [];
      await recheckRun(dir, (w) => warnings.push(w));
      expect(readFileSync(join(root, 'index.html'), 'utf8'), quoted).toBe(foreign);
      expect(warnings.map((w) => w.kind)).toEqual(['foreign-page']);
    }
  });

  it('a page fencekit wrote is still refreshed', async () => {
    const root = site();
    writeSiteIndex(root);
    const dir = storeRun(root, 'r', { meta: runMeta('r') });
    await recheckRun(dir, () => {});
    expect(readFileSync(join(root, 'index.html'), 'utf8')).toContain('data-run="r"');
  });
});

describe('fencekit report with nothing to report (LOW 13)', () => {
  it('a missing --out is exit 3 and creates nothing, not even its parents', async () => {
    const root = site();
    const out = join(root, 'nonexistent', 'x');
    const r = await fencekit(['report', '--out', out], 30_000);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/no such directory/);
    expect(existsSync(join(root, 'nonexistent'))).toBe(false);
  });

  it('a directory without runs is exit 3 saying so, and no index is written', async () => {
    const root = site();
    const r = await fencekit(['report', '--out', root], 30_000);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/no run to report/);
    expect(existsSync(join(root, 'index.html'))).toBe(false);
  });
});

describe('a history of NUL bytes (LOW 17)', () => {
  it('is refused on its first line’s length, before it is decoded or parsed', () => {
    const root = site();
    const dir = storeRun(root, 'r', { meta: runMeta('r') });
    // 100 MB of NUL bytes, no line feed (a sparse file: nothing is written to disk). The old reader decoded,
    // split and parsed it whole: for 250 MB, 2 GB and 20 s to a RangeError.
    truncateSync(join(dir, 'history.jsonl'), 100 * 2 ** 20);
    const error = (() => {
      try {
        readRunHistory(join(dir, 'history.jsonl'));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(StoredRunError);
    expect((error as StoredRunError).problem).toBe(`line 1: longer than ${64 * 2 ** 20} bytes`);
  });
});
