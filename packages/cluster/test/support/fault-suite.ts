import { type ProviderName, UnsupportedFaultError } from '@fencekit/cluster';
import { expect, it } from 'vitest';
import { etcdClient, withRedis, zookeeperClient } from './clients.js';
import { describeCluster } from './cluster-scope.js';
import { alive } from './leftovers.js';
import { expectEtcdServes, expectZookeeperServes } from './serves.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Each fault shows its effect on a real server, then its heal. */
export function faultSuite(provider: ProviderName): void {
  describeCluster('redis behind a fault proxy', { topology: 'redis', proxy: true, provider }, (current) => {
    it('a paused Redis times out a PING and answers after resume', () => {
      const cluster = current();
      return withRedis(cluster.endpoints[0]!, { commandTimeout: 500 }, async (redis) => {
        expect(await redis.ping()).toBe('PONG');
        await cluster.faults.pause('n1');
        await expect(redis.ping()).rejects.toThrow(/timed out/i);
        await cluster.faults.resume('n1');
        expect(await redis.ping()).toBe('PONG');
      });
    });

    it("the proxy's latency shows in measured round trips", () => {
      const cluster = current();
      return withRedis(cluster.endpoints[0]!, {}, async (redis) => {
        await redis.ping();
        await cluster.faults.latency('n1', { ms: 100 }); // each way
        const started = performance.now();
        await redis.ping();
        expect(performance.now() - started).toBeGreaterThanOrEqual(199);
        await cluster.faults.heal();
      });
    });

    it('cutClients holds requests until heal, then they complete', () => {
      const cluster = current();
      return withRedis(cluster.endpoints[0]!, { commandTimeout: 500 }, (impatient) =>
        withRedis(cluster.endpoints[0]!, { commandTimeout: 10_000 }, async (patient) => {
          await patient.ping();
          await cluster.faults.cutClients('n1');
          await expect(impatient.ping()).rejects.toThrow(/timed out/i);
          const held = patient.set('held', 'yes');
          await pause(300);
          await cluster.faults.heal();
          expect(await held).toBe('OK');
          expect(await patient.get('held')).toBe('yes');
        }),
      );
    });

    it('a reset_peer toxic resets connections; heal lets new ones through', async () => {
      const cluster = current();
      await cluster.faults.toxic('n1', { type: 'reset_peer', timeoutMs: 0 });
      await withRedis(cluster.endpoints[0]!, { commandTimeout: 1000 }, async (redis) => {
        await expect(redis.connect()).rejects.toThrow();
      });
      await cluster.faults.heal();
      await withRedis(cluster.endpoints[0]!, {}, async (again) => {
        expect(await again.ping()).toBe('PONG');
      });
    });

    it('a +30 s clock jump takes 30 s off a PX 60000 key; a jump past its TTL expires it', () => {
      const cluster = current();
      return withRedis(cluster.endpoints[0]!, {}, async (redis) => {
        await redis.set('lease', 'holder', 'PX', 60_000);
        await cluster.faults.clock('n1', { offsetMs: 30_000 });
        const left = await redis.pttl('lease');
        expect(left).toBeGreaterThan(0);
        expect(left).toBeLessThanOrEqual(30_000);
        await cluster.faults.clock('n1', { offsetMs: 60_001 });
        expect(await redis.get('lease')).toBeNull();
        await cluster.faults.heal();
        await redis.set('after', '1', 'PX', 60_000);
        expect(await redis.pttl('after')).toBeGreaterThan(59_000);
      });
    });

    it('kill -9 then restart keeps the endpoint; the restarted (empty) server serves', () => {
      const cluster = current();
      return withRedis(cluster.endpoints[0]!, {}, async (redis) => {
        await redis.set('before-kill', '1');
        const pid = cluster.nodes[0]!.pid;
        await cluster.faults.kill('n1');
        if (pid !== undefined) expect(alive(pid)).toBe(false);
        await cluster.faults.restart('n1');
        expect(await redis.ping()).toBe('PONG');
        expect(await redis.get('before-kill')).toBeNull(); // no persistence: a restart loses the data
      });
    });
  });

  describeCluster('etcd, 3 members', { topology: 'etcd', nodes: 3, provider }, (current) => {
    it('has a leader and serves put/get', async () => {
      const cluster = current();
      expect(await cluster.leader()).toMatch(/^n\d$/);
      await expectEtcdServes(cluster.endpoints);
    });

    it('an isolated leader is replaced, and linearizable reads through it fail until heal', async () => {
      const cluster = current();
      const leader = await cluster.leader();
      expect(leader).toBeDefined();
      const index = cluster.nodes.findIndex((n) => n.id === leader);
      const viaOld = etcdClient([cluster.endpoints[index]!], 1500);
      const viaOthers = etcdClient(cluster.endpoints.filter((_, i) => i !== index));
      try {
        await viaOld.put('k').value('before');
        await cluster.faults.partition({ isolate: leader! });
        const replaced = await cluster.waitForLeader({ not: leader!, timeoutMs: 30_000 });
        expect(replaced).not.toBe(leader);
        await viaOthers.put('k').value('after');
        await expect(viaOld.get('k').string()).rejects.toThrow();
        await cluster.faults.heal();
        let value: string | null = null;
        for (let i = 0; i < 50 && value !== 'after'; i++) {
          value = await viaOld
            .get('k')
            .string()
            .catch(() => null);
          if (value !== 'after') await pause(200);
        }
        expect(value).toBe('after');
      } finally {
        viaOld.close();
        viaOthers.close();
      }
    });

    it('clock faults on etcd are reported as unsupported', async () => {
      const cluster = current();
      await expect(cluster.faults.clock('n1', { offsetMs: 30_000 })).rejects.toBeInstanceOf(
        UnsupportedFaultError,
      );
    });
  });

  describeCluster('zookeeper, 3 members', { topology: 'zookeeper', nodes: 3, provider }, (current) => {
    it('has a leader and serves create/get', async () => {
      const cluster = current();
      expect(await cluster.leader()).toMatch(/^n\d$/);
      await expectZookeeperServes(cluster.endpoints);
    });

    it('a killed follower rejoins the ensemble and serves what was written meanwhile', async () => {
      const cluster = current();
      const leader = await cluster.leader();
      const follower = cluster.nodes.find((n) => n.id !== leader)!;
      const others = cluster.nodes.filter((n) => n.id !== follower.id).map((n) => n.endpoint);
      await cluster.faults.kill(follower.id);
      const zk = await zookeeperClient(others);
      try {
        await zk.create('/while-down', 'written');
      } finally {
        zk.close();
      }
      await cluster.faults.restart(follower.id);
      const direct = await zookeeperClient([follower.endpoint]);
      try {
        expect(await direct.get('/while-down')).toBe('written');
      } finally {
        direct.close();
      }
    });

    it('an isolated leader loses leadership, the others elect one, and after heal it rejoins as follower', async () => {
      const cluster = current();
      const leader = (await cluster.leader())!;
      await cluster.faults.partition({ isolate: leader });
      const replaced = await cluster.waitForLeader({ not: leader!, timeoutMs: 30_000 });
      expect(replaced).not.toBe(leader);
      const majority = await zookeeperClient(
        cluster.nodes.filter((n) => n.id !== leader).map((n) => n.endpoint),
      );
      try {
        await majority.create('/during-partition', 'majority');
      } finally {
        majority.close();
      }
      await cluster.faults.heal();
      await cluster.faults.heal(); // idempotent
      const old = cluster.nodes.find((n) => n.id === leader)!;
      let value: string | undefined;
      for (let i = 0; i < 100 && value === undefined; i++) {
        const zk = await zookeeperClient([old.endpoint], 3000).catch(() => undefined);
        value = await zk?.get('/during-partition').catch(() => undefined);
        zk?.close();
        if (value === undefined) await pause(200);
      }
      expect(value).toBe('majority'); // the old leader caught up with what the majority wrote without it
    });
  });

  describeCluster('zookeeper, 1 node', { topology: 'zookeeper', nodes: 1, provider }, (current) => {
    it('serves create/get', async () => {
      const cluster = current();
      expect(await cluster.leader()).toBe('n1');
      await expectZookeeperServes(cluster.endpoints);
    });

    // On an ensemble the same jump makes the leader drop its followers (syncLimit) and an election follows, which
    // renews sessions; a single server shows the clock's effect on session expiry alone.
    it("a +30 s clock jump expires a 20 s session's ephemeral node (the JVM honours the shim)", async () => {
      const cluster = current();
      const owner = await zookeeperClient(cluster.endpoints, 15_000, 20_000);
      try {
        await owner.createEphemeral('/owned');
        await cluster.faults.clock('n1', { offsetMs: 30_000 });
        const observer = await zookeeperClient(cluster.endpoints);
        try {
          let exists = true;
          for (let i = 0; i < 50 && exists; i++) {
            await pause(200);
            exists = await observer.exists('/owned');
          }
          expect(exists).toBe(false);
        } finally {
          observer.close();
        }
      } finally {
        owner.close();
        await cluster.faults.heal();
      }
    });
  });
}
