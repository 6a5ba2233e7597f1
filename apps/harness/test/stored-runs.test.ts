import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { recheckRun } from '../src/check/recheck.js';
import { OutputDirError, prepareOutputDir } from '../src/report/output-dir.js';
import { rebuildSite } from '../src/report/rebuild.js';
import { readStoredRuns, writeSiteIndex } from '../src/report/site.js';
import { StoredRunError } from '../src/report/stored-run.js';
import type { ReportWarning } from '../src/report/warnings.js';
import { runMeta, runResults, storeRun } from './support/stored-runs.js';

/**
 * `fencekit check` and `fencekit report` over stored run directories that are not all fencekit's own
 * (#14): a bad sibling is skipped with a warning naming it, a page fencekit did not write is never
 * overwritten, and a reports directory that cannot take files fails at once.
 */
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});
function site(): string {
  const root = mkdtempSync(join(tmpdir(), 'fencekit-stored-'));
  roots.push(root);
  return root;
}
function collect(): { warnings: ReportWarning[]; warn: (w: ReportWarning) => void } {
  const warnings: ReportWarning[] = [];
  return { warnings, warn: (w) => warnings.push(w) };
}

const SECRET = 'hunter2-password';

describe('stored run files', () => {
  it('a sibling run.json without startedAt is skipped with a warning; check and report go on', async () => {
    const root = site();
    const good = storeRun(root, 'good', { meta: runMeta('good'), results: runResults('good') });
    writeSiteIndex(root);
    const { startedAt: _, ...noStart } = runMeta('bad');
    storeRun(root, 'bad', { meta: noStart, results: runResults('bad') });
    const { warnings, warn } = collect();
    expect(await recheckRun(good, warn)).toMatch(/^(ok|unknown)$/);
    const skipped = warnings.filter((w) => w.kind === 'skipped-run');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.file).toBe(join(root, 'bad', 'run.json'));
    expect(skipped[0]!.problem).toMatch(/startedAt/);
    const index = readFileSync(join(root, 'index.html'), 'utf8');
    expect(index).toContain('data-run="good"');
    expect(index).not.toContain('data-run="bad"');

    const again = collect();
    expect(rebuildSite(root, again.warn)).toBe(1);
    expect(again.warnings.map((w) => w.file)).toEqual([join(root, 'bad', 'run.json')]);
  });

  it('each kind of bad file is named with what was wrong, never with the value it held', () => {
    const root = site();
    const meta = runMeta('x');
    storeRun(root, 'not-json', { meta: `{"id": "${SECRET}"`, results: runResults('a') });
    storeRun(root, 'wrong-type', { meta: { ...meta, seed: SECRET }, results: runResults('b') });
    storeRun(root, 'bad-verdict', { meta, results: { ...runResults('c'), verdict: SECRET } });
    const deep = JSON.stringify({ ...runResults('d'), checkers: { x: 'NEST' } }).replace(
      '"NEST"',
      nest(5_000),
    );
    storeRun(root, 'deep', { meta, results: deep });
    storeRun(root, 'too-many-clients', { meta: { ...meta, clients: 1e9 }, results: runResults('e') });
    storeRun(root, 'binary', {
      meta: Buffer.from([0xff, 0xfe, 0x7b]).toString('latin1'),
      results: runResults('f'),
    });
    const { runs, skipped } = readStoredRuns(root);
    expect(runs).toEqual([]);
    const problems = Object.fromEntries(skipped.map((w) => [w.file.split('/').at(-2), w.problem]));
    expect(problems).toMatchObject({
      'not-json': 'not valid JSON',
      'wrong-type': expect.stringMatching(/^seed: .*expected number/),
      'bad-verdict': expect.stringMatching(/^verdict: /),
      deep: 'nested deeper than 64 levels',
      'too-many-clients': expect.stringMatching(/^clients: /),
    });
    for (const w of skipped) {
      expect(w.kind).toBe('skipped-run');
      expect(w.problem).not.toContain(SECRET);
    }
  });

  it('a history.jsonl that is not one is skipped by report (its run.json and results.json are fine)', () => {
    const root = site();
    storeRun(root, 'r', {
      meta: runMeta('r'),
      results: runResults('r'),
      history: `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","value":"${SECRET}"\n`,
    });
    const { warnings, warn } = collect();
    expect(rebuildSite(root, warn)).toBe(0);
    expect(warnings).toEqual([
      {
        kind: 'skipped-run',
        file: join(root, 'r', 'history.jsonl'),
        problem: expect.stringMatching(/^line 1: /),
      },
    ]);
    expect(warnings[0]!.problem).not.toContain(SECRET);
  });

  it('check of a run whose own run.json is bad is bad input naming the file', async () => {
    const root = site();
    const dir = storeRun(root, 'r', { meta: { ...runMeta('r'), workload: 'chess' } });
    const error = await recheckRun(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoredRunError);
    expect((error as StoredRunError).file).toBe(join(dir, 'run.json'));
    expect((error as StoredRunError).problem).toMatch(/^workload: /);
  });
});

describe('the site index above a re-checked run', () => {
  it('is left alone when fencekit did not write it, and said so', async () => {
    const root = site();
    const mine = '<!doctype html><title>my own page</title><p>not fencekit’s</p>';
    writeFileSync(join(root, 'index.html'), mine);
    const dir = storeRun(root, 'r', { meta: runMeta('r') });
    const { warnings, warn } = collect();
    await recheckRun(dir, warn);
    expect(readFileSync(join(root, 'index.html'), 'utf8')).toBe(mine);
    expect(warnings).toEqual([
      {
        kind: 'foreign-page',
        file: join(root, 'index.html'),
        problem: expect.stringMatching(/not a page fencekit wrote/),
      },
    ]);
    // The run's own page is written: the run directory is fencekit's.
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).toContain(
      '<meta name="generator" content="fencekit">',
    );
  });

  it('is not created where there was none, and is refreshed where fencekit made it', async () => {
    const root = site();
    const dir = storeRun(root, 'r', { meta: runMeta('r') });
    await recheckRun(dir, () => {});
    expect(existsSync(join(root, 'index.html'))).toBe(false);

    writeSiteIndex(root);
    storeRun(root, 'later', { meta: runMeta('later'), results: runResults('later') });
    const { warnings, warn } = collect();
    await recheckRun(dir, warn);
    expect(warnings).toEqual([]);
    expect(readFileSync(join(root, 'index.html'), 'utf8')).toContain('data-run="later"');
  });

  it('fencekit report does not overwrite an index.html that is not fencekit’s either', () => {
    const root = site();
    writeFileSync(join(root, 'index.html'), 'hand-written');
    const { warnings, warn } = collect();
    writeSiteIndex(root, { warn });
    expect(readFileSync(join(root, 'index.html'), 'utf8')).toBe('hand-written');
    expect(warnings.map((w) => w.kind)).toEqual(['foreign-page']);
  });
});

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** The built CLI, killed after `limitMs` (a hang shows as code null). */
function fencekit(
  args: string[],
  limitMs: number,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stderr, ms: performance.now() - started });
    });
  });
}

describe('fencekit report', () => {
  it('says which run it skipped and why on stderr, with no raw escape from a directory name', async () => {
    const root = site();
    storeRun(root, 'good', { meta: runMeta('good'), results: runResults('good') });
    storeRun(root, 'bad\u001b]0;retitled\u0007', {
      meta: { ...runMeta('bad'), seed: SECRET },
      results: runResults('bad'),
    });
    const r = await fencekit(['report', '--out', root], 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^fencekit: warning: skipped .*bad.*run\.json: seed: /m);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).not.toContain('\u0007');
    expect(r.stderr).not.toContain(SECRET);
    expect(readFileSync(join(root, 'index.html'), 'utf8')).toContain('data-run="good"');
  });
});

describe('--out', () => {
  it('under /proc fails at once with exit 3 (it hung forever in a recursive mkdir)', async () => {
    for (const args of [
      ['run', '--backend', 'memory', '--time', '1s', '--out', '/proc/fencekit-reports'],
      ['suite', '--short', '--backends', 'memory', '--out', '/proc/self/fencekit'],
      ['report', '--out', '/proc'],
    ]) {
      const r = await fencekit(args, 30_000);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toMatch(/^fencekit: --out \/proc\S*: /m);
      expect(r.ms).toBeLessThan(20_000);
    }
  });

  it('a file in the way, or a directory that takes no files, is a typed error; only the last level is made', () => {
    const root = site();
    writeFileSync(join(root, 'file'), '');
    expect(() => prepareOutputDir(join(root, 'file', 'reports'))).toThrow(OutputDirError);
    expect(() => prepareOutputDir('/proc/x')).toThrow(/cannot create \/proc\/x/);
    // Like mkdir without -p (#14 review LOW 13): a missing parent is an error, not a tree grown from `/`.
    expect(() => prepareOutputDir(join(root, 'a', 'b'))).toThrow(/does not exist/);
    expect(existsSync(join(root, 'a'))).toBe(false);
    expect(prepareOutputDir(join(root, 'a'))).toBe(join(root, 'a'));
    expect(existsSync(join(root, 'a'))).toBe(true);
  });
});

/** `{"a":{"a":…}}` nested `depth` deep, as JSON text. */
function nest(depth: number): string {
  return `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;
}
