import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunMeta } from '../src/index.js';
import { reportsDir } from './support/runs.js';

/**
 * `--provider external`: servers fencekit did not start (here a local etcd started without our proxy, standing in
 * for a shared staging cluster) get a run with client-side faults only, a verdict, a report marked as such, and
 * every key that was there before left exactly as it was.
 */
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const out = reportsDir();

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a user runs it, bounded: a run that hangs is killed and fails the test. */
function fencekit(args: string[], boundMs = 150_000): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface Kv {
  key: string;
  value: string;
  modRevision: string;
}

/** Every key in the store, through etcd's JSON gateway on a member's own port (no client library needed). */
async function allKeys(endpoint: string): Promise<Kv[]> {
  const zero = Buffer.from([0]).toString('base64');
  const response = await fetch(`http://${endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: zero, range_end: zero }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { kvs?: { key: string; value?: string; mod_revision: string }[] };
  return (body.kvs ?? []).map((kv) => ({
    key: Buffer.from(kv.key, 'base64').toString(),
    value: Buffer.from(kv.value ?? '', 'base64').toString(),
    modRevision: kv.mod_revision,
  }));
}

async function put(endpoint: string, key: string, value: string): Promise<void> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const response = await fetch(`http://${endpoint}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({ key: b64(key), value: b64(value) }),
    signal: AbortSignal.timeout(5_000),
  });
  expect(response.ok).toBe(true);
}

let servers: Cluster;
let endpoints: string;
let before: Kv[];
let pids: (number | undefined)[];
beforeAll(async () => {
  servers = await startCluster({ topology: 'etcd', nodes: 3 });
  endpoints = servers.nodes.map((n) => n.directEndpoint).join(',');
  const first = servers.nodes[0]!.directEndpoint;
  // Their keys, some of them next to where fencekit's namespace sorts ("fencekit-…", "fencekit/…").
  for (const [key, value] of [
    ['app/config', '{"mode":"prod"}'],
    ['fencekit', 'not ours'],
    ['fencekit/locks/stock', 'not ours either'],
    ['zz-last', 'x'],
  ] as const) {
    await put(first, key, value);
  }
  before = await allKeys(first);
  pids = servers.nodes.map((n) => n.pid);
}, 120_000);
afterAll(async () => {
  await servers?.close();
  rmSync(out, { recursive: true, force: true });
});

describe('fencekit run --provider external', () => {
  it('refuses server faults, scenarios, missing or stray endpoints and serverless backends before starting anything', async () => {
    const base = ['run', '--backend', 'etcd', '--out', out];
    const cases: [string[], RegExp][] = [
      [
        ['--provider', 'external', '--endpoints', endpoints, '--fault', 'kill,latency'],
        /fault kill acts on the servers/,
      ],
      [
        ['--provider', 'external', '--endpoints', endpoints, '--fault', 'isolate'],
        /fault isolate acts on the servers/,
      ],
      [['--provider', 'external'], /--endpoints: --provider external needs/],
      [['--provider', 'local', '--endpoints', endpoints], /only --provider external takes endpoints/],
      [['--provider', 'external', '--endpoints', 'http://127.0.0.1:1'], /host:port/],
    ];
    for (const [args, message] of cases) {
      const exit = await fencekit([...base, ...args], 30_000);
      expect(exit.code, exit.stderr).toBe(64);
      expect(exit.stderr).toMatch(message);
    }
    const memory = await fencekit(
      ['run', '--backend', 'memory', '--provider', 'external', '--endpoints', endpoints, '--out', out],
      30_000,
    );
    expect(memory.code, memory.stderr).toBe(64);
    expect(memory.stderr).toMatch(/memory runs no servers/);
  });

  it('an etcd inventory cell under client-side faults gives a verdict and leaves every other key untouched', async () => {
    const exit = await fencekit([
      'run',
      '--backend',
      'etcd',
      '--workload',
      'inventory',
      '--provider',
      'external',
      '--endpoints',
      endpoints,
      '--fault',
      'cut-clients,latency,pause-client',
      '--clients',
      '3',
      '--time',
      '20s',
      '--seed',
      '3',
      '--out',
      out,
      '--json',
    ]);
    // Exit 0, 1 or 2 is a verdict (ok, illegal, unknown); 3 would be a failed run.
    expect([0, 1, 2], exit.stderr).toContain(exit.code);
    const result = JSON.parse(exit.stdout) as { verdict: string; id: string; dir: string; meta: RunMeta };
    // etcd with fencing is clean under these faults (as with the local provider); unknown only if a fault's
    // effect could not be observed on a loaded machine.
    expect(['ok', 'unknown'], exit.stderr).toContain(result.verdict);
    expect(result.meta.provider).toBe('external');
    expect(result.meta.clientSideOnly).toBe(true);
    const applied = result.meta.faultsApplied.filter((f) => f.applied);
    expect(applied.length, JSON.stringify(result.meta.faultsApplied)).toBeGreaterThan(0);
    for (const f of result.meta.faultsApplied) {
      expect(['cut-clients', 'latency', 'pause-client', 'all']).toContain(f.fault);
    }
    expect(readFileSync(join(result.dir, 'index.html'), 'utf8')).toMatch(/client-side only/);

    // Their keys: same values, never rewritten (same mod revision). Anything new lives under the run's prefix.
    const after = await allKeys(servers.nodes[0]!.directEndpoint);
    const now = new Map(after.map((kv) => [kv.key, kv]));
    for (const kv of before) expect(now.get(kv.key)).toEqual(kv);
    const known = new Set(before.map((kv) => kv.key));
    for (const kv of after) {
      if (!known.has(kv.key)) expect(kv.key.startsWith(`fencekit-${result.id}`), kv.key).toBe(true);
    }
    // Nothing was restarted or left stopped: the same server processes, all serving.
    expect(servers.nodes.map((n) => n.pid)).toEqual(pids);
    for (const n of servers.nodes) {
      const state = readFileSync(`/proc/${n.pid}/stat`, 'utf8').split(') ')[1]?.[0];
      expect(['R', 'S', 'D'], `${n.id} state`).toContain(state);
    }
  });
});
