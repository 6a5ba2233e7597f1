import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BRIDGE,
  localEnv,
  processesUnder,
  type SecondEngine,
  secondEngineUnavailable,
  startSecondEngine,
} from './support/second-engine.js';

const run = promisify(execFile);

/**
 * The docker provider against an engine other than this machine's socket (DOCKER_HOST=tcp://…): a second dockerd
 * started here for the purpose, publishing its containers' ports on 127.0.0.2 only. Containers run on that
 * engine, not the main one; clients and probes reach the ports on its host; faults act through `docker exec`
 * (nsenter is for this machine's engine); and closing removes what was made there.
 */
const unavailable = await secondEngineUnavailable();
if (unavailable) console.warn(`[cluster] remote engine tests SKIPPED: ${unavailable}`);

/** fencekit's containers and networks on an engine. */
async function labelled(env: NodeJS.ProcessEnv): Promise<string> {
  const ps = await run('docker', ['ps', '-aq', '--filter', 'label=fencekit.cluster'], {
    env,
    timeout: 20_000,
  });
  const networks = await run('docker', ['network', 'ls', '-q', '--filter', 'label=fencekit.cluster'], {
    env,
    timeout: 20_000,
  });
  return `${ps.stdout}${networks.stdout}`.trim();
}

describe.skipIf(unavailable !== undefined)(
  `docker provider, remote engine${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let engine: SecondEngine;
    const saved = { host: process.env.DOCKER_HOST, override: process.env.TESTCONTAINERS_HOST_OVERRIDE };
    beforeAll(async () => {
      engine = await startSecondEngine();
      process.env.DOCKER_HOST = engine.url;
      // The override names where ports are published; an inherited loopback one would be wrong for this engine.
      delete process.env.TESTCONTAINERS_HOST_OVERRIDE;
    }, 8 * 60_000);
    afterAll(async () => {
      if (saved.host === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved.host;
      if (saved.override === undefined) delete process.env.TESTCONTAINERS_HOST_OVERRIDE;
      else process.env.TESTCONTAINERS_HOST_OVERRIDE = saved.override;
      await engine?.stop();
    }, 120_000);

    const bridgeBefore = existsSync('/sys/class/net/docker0');

    it(
      'a 3-node etcd runs there, served on its host, faulted through it, and leaves nothing behind',
      async () => {
        const mainBefore = await labelled(localEnv());
        let cluster: Cluster | undefined = await startCluster({
          topology: 'etcd',
          provider: 'docker',
          proxy: true,
        });
        try {
          // Ports on the engine's host; clients through our proxies on loopback.
          for (const node of cluster.nodes) expect(node.directEndpoint).toMatch(/^127\.0\.0\.2:\d+$/);
          for (const endpoint of cluster.endpoints) expect(endpoint).toMatch(/^127\.0\.0\.1:\d+$/);
          // The containers are the second engine's, not the main one's.
          const there = await run(
            'docker',
            ['ps', '-q', '--no-trunc', '--filter', 'label=fencekit.cluster'],
            {
              timeout: 20_000,
            },
          );
          for (const node of cluster.nodes) expect(there.stdout).toContain(node.containerId);
          expect(await labelled(localEnv())).toBe(mainBefore);

          const client = new Etcd3({ hosts: cluster.endpoints.map((e) => `http://${e}`) });
          try {
            await client.put('where').value('second engine');
            expect(await client.get('where').string()).toBe('second engine');
          } finally {
            client.close();
          }

          // Server faults inside its containers (docker exec through the engine), seen by independent probes.
          await cluster.faults.pause('n1');
          expect(
            await cluster.faults.observe({ fault: 'pause', node: 'n1', phase: 'started', timeoutMs: 20_000 }),
          ).toMatchObject({ seen: true });
          await cluster.faults.heal();
          const leader = await cluster.waitForLeader({ timeoutMs: 60_000 });
          await cluster.faults.partition({ isolate: leader });
          expect(await cluster.waitForLeader({ not: leader, timeoutMs: 60_000 })).not.toBe(leader);
          await cluster.faults.heal();
          expect(
            await cluster.faults.observe({ fault: 'partition', phase: 'healed', timeoutMs: 30_000 }),
          ).toMatchObject({ seen: true });
          await cluster.faults.cutClients('n2');
          expect(
            await cluster.faults.observe({
              fault: 'cutClients',
              node: 'n2',
              phase: 'started',
              timeoutMs: 20_000,
            }),
          ).toMatchObject({ seen: true });
          await cluster.faults.heal();
          await cluster.close();
          cluster = undefined;
          expect(await labelled(process.env)).toBe('');
        } finally {
          await cluster?.close();
        }
      },
      5 * 60_000,
    );

    it("stopping it leaves the main engine's bridge as it was, and nothing of its own", async () => {
      await engine.stop();
      // dockerd --bridge=none would have deleted docker0, the main engine's default bridge.
      expect(existsSync('/sys/class/net/docker0')).toBe(bridgeBefore);
      expect(existsSync(`/sys/class/net/${BRIDGE}`)).toBe(false);
      const rules = await run('iptables', ['-S', 'FORWARD'], { timeout: 10_000 });
      expect(rules.stdout).not.toContain('fencekit-second-engine');
      // No dockerd, containerd or shim of any second engine (their command lines name its /tmp/fk-e2-* dir).
      expect(processesUnder('/tmp/fk-e2-')).toEqual([]);
    }, 120_000);
  },
);
