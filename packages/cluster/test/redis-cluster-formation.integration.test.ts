import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts } from '../src/ports.js';
import { ClusterReplication, type RedisMember } from '../src/replication.js';

/**
 * Forming a Redis Cluster when a step fails once, on real redis-server processes (cluster-enabled, started here
 * without @fencekit/cluster's provider so the test decides when each one listens). On a loaded machine a node
 * answers late, so the first ADDSLOTSRANGE or MEET to it fails: the harness's redis-cluster never formed at load
 * 31–74 (#17). The old assemble() failed the start at the first refused command.
 */
const servers: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Six cluster-enabled nodes' ports (client, bus) and members as ClusterReplication sees them. */
async function layout(): Promise<{ members: RedisMember[]; ports: Array<[number, number]> }> {
  const picked = await freePorts(12);
  const ports = Array.from({ length: 6 }, (_, i) => [picked[2 * i]!, picked[2 * i + 1]!] as [number, number]);
  const members = ports.map(([port, bus], i) => ({
    id: `n${i + 1}`,
    host: '127.0.0.1',
    port,
    announced: `127.0.0.1:${port}`,
    announcedBusPort: bus,
  }));
  return { members, ports };
}

function startNode([port, bus]: [number, number]): void {
  const dir = mkdtempSync(join(tmpdir(), 'fencekit-formation-'));
  dirs.push(dir);
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(bus),
      '--cluster-config-file',
      join(dir, 'nodes.conf'),
      '--cluster-node-timeout',
      '2000',
      '--cluster-announce-ip',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'no',
    ],
    { stdio: 'ignore' },
  );
  servers.push(child);
}

describe('Redis Cluster formation (ClusterReplication.assemble)', () => {
  it('forms when a primary starts listening only after the formation began', async () => {
    const { members, ports } = await layout();
    for (const [i, p] of ports.entries()) if (i !== 1) startNode(p);
    // n2, a primary, comes up 1.5 s late: its ADDSLOTSRANGE and MEET are refused (connection refused) first.
    const late = setTimeout(() => startNode(ports[1]!), 1_500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const replication = new ClusterReplication(members);
    try {
      await replication.assemble(AbortSignal.timeout(45_000));
      await replication.waitWhole(30_000);
    } finally {
      clearTimeout(late);
    }
    expect((await replication.primaries()).sort()).toEqual(['n1', 'n2', 'n3']);
    expect(await replication.replicasOf('n2')).toEqual(['n5']);
  }, 90_000);

  it('names the step that did not complete when a node never comes', async () => {
    const { members, ports } = await layout();
    for (const [i, p] of ports.entries()) if (i !== 4) startNode(p);
    const replication = new ClusterReplication(members);
    const failure = await replication.assemble(AbortSignal.timeout(6_000)).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toMatch(
      /^Redis Cluster formation step "every node to know every other \(CLUSTER MEET\)" did not complete before the start's bound: .*n5/,
    );
  }, 60_000);

  it("a promotion fault's default target follows slot 0 to the promoted replica", async () => {
    const { members, ports } = await layout();
    for (const p of ports) startNode(p);
    const replication = new ClusterReplication(members);
    await replication.assemble(AbortSignal.timeout(45_000));
    await replication.waitWhole(30_000);
    expect(await replication.defaultPrimary()).toBe('n1');
    // n1's replica n4 takes slot 0's shard over (CLUSTER FAILOVER: it waits for n4 to catch up, loses nothing).
    await replication.promote('n1', AbortSignal.timeout(20_000));
    const deadline = Date.now() + 20_000;
    while (!(await replication.primaries()).includes('n4') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await replication.primaries()).toEqual(['n2', 'n3', 'n4']);
    // The sorted list's first, n2, serves no key of slot 0: the old default failed over a shard nobody used.
    expect(await replication.defaultPrimary()).toBe('n4');
  }, 120_000);
});
