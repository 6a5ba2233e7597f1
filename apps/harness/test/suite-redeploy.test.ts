import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The suite's loop alone: runs and deployments are stand-ins, so what is tested is when it deploys again.
const deploys: string[] = [];
const closes: string[] = [];
const problemsByRun: string[][] = [];
let deployFailsAfter = Number.POSITIVE_INFINITY;

vi.mock('../src/backends/index.js', () => ({
  loadBackend: async () => ({
    preflight: async () => undefined,
    deploy: async () => {
      if (deploys.length >= deployFailsAfter) throw new Error('cannot start the cluster');
      const id = `d${deploys.length + 1}`;
      deploys.push(id);
      return {
        id,
        faults: { heal: async () => undefined },
        close: async () => {
          closes.push(id);
        },
      };
    },
  }),
}));
vi.mock('../src/run/run.js', () => ({
  runOnce: async (_options: unknown, hooks: { deployment: { id: string } }) => {
    const problems = problemsByRun.shift() ?? [];
    const meta = {
      problems,
      backend: 'redis-cluster-epoch',
      workload: 'inventory',
      faults: [],
      scenario: null,
      fencing: true,
    };
    return { id: `run-on-${hooks.deployment.id}`, dir: '/nonexistent', verdict: 'ok', meta };
  },
}));

const { runSuite } = await import('../src/suite/suite.js');

const dirs: string[] = [];
afterEach(() => {
  deploys.length = 0;
  closes.length = 0;
  problemsByRun.length = 0;
  deployFailsAfter = Number.POSITIVE_INFINITY;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const entries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    options: { backend: 'redis-cluster-epoch' as const, workload: 'inventory' as const, seed: i },
    expect: 'report' as const,
    why: 'test',
  }));

function out(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fk-suite-redeploy-'));
  dirs.push(dir);
  return dir;
}

describe('runSuite with a shared deployment whose final heal failed', () => {
  it('deploys the backend again for the next runs, and closes the broken one', async () => {
    problemsByRun.push([], ['the final heal failed: Timed out after 45000 ms'], []);
    const outcomes = await runSuite(entries(3), { out: out(), provider: 'local', progress: () => undefined });
    expect(outcomes.map((x) => x.run?.id)).toEqual(['run-on-d1', 'run-on-d1', 'run-on-d2']);
    expect(deploys).toEqual(['d1', 'd2']);
    expect(closes).toEqual(['d1', 'd2']);
  });

  it('fails the remaining runs with the reason when the new deployment cannot start', async () => {
    problemsByRun.push(['the final heal failed: Timed out'], []);
    deployFailsAfter = 1;
    const outcomes = await runSuite(entries(3), { out: out(), provider: 'local', progress: () => undefined });
    expect(outcomes).toHaveLength(3);
    expect(outcomes[0]?.run?.id).toBe('run-on-d1');
    expect(outcomes.slice(1).map((x) => x.error)).toEqual([
      'cannot start the cluster',
      'cannot start the cluster',
    ]);
  });

  it('keeps one deployment when every heal succeeded', async () => {
    const outcomes = await runSuite(entries(3), { out: out(), provider: 'local', progress: () => undefined });
    expect(outcomes.every((x) => x.run?.id === 'run-on-d1')).toBe(true);
    expect(deploys).toEqual(['d1']);
  });
});
