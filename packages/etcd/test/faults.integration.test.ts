import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { isFencekitError, monotonicNow } from '@fencekit/core';
import { EtcdClient, type EtcdLease, guardedPut } from '@fencekit/etcd';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * Faults against a real 3-member etcd with a fault proxy in front of every member. Child processes
 * run the built package (`npx tsc -b packages/etcd` first; `npm test` does it).
 */
const holderScript = fileURLToPath(new URL('./support/holder-process.mjs', import.meta.url));
const prefix = `fk-faults-${process.pid}`;
let cluster: Cluster;
const clients: EtcdClient[] = [];

function client(hosts: readonly string[]): EtcdClient {
  const c = new EtcdClient({ hosts: [...hosts], prefix, callTimeoutMs: 2_000 });
  clients.push(c);
  return c;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the protected resource saw, on one monotonic clock: the evidence for "who acted when". */
class ResourceLog {
  readonly entries: { event: string; at: number }[] = [];
  record(event: string): void {
    this.entries.push({ event, at: monotonicNow() });
  }
  at(event: string): number {
    const entry = this.entries.find((e) => e.event === event);
    if (!entry) throw new Error(`"${event}" never happened; log: ${JSON.stringify(this.entries)}`);
    return entry.at;
  }
}

/** A follower (not the leader) and the other members. */
async function pickFollower(): Promise<{ follower: string; others: string[] }> {
  const deadline = Date.now() + 15_000;
  let leader = await cluster.leader();
  while (!leader && Date.now() < deadline) {
    await delay(200);
    leader = await cluster.leader();
  }
  const follower = cluster.nodes.find((n) => n.id !== leader);
  if (!follower) throw new Error('no follower');
  return {
    follower: follower.id,
    others: cluster.nodes.filter((n) => n.id !== follower.id).map((n) => n.id),
  };
}

const endpointOf = (id: string) => {
  const node = cluster.nodes.find((n) => n.id === id);
  if (!node) throw new Error(`no node ${id}`);
  return node.endpoint;
};

/** Retries a guarded write until etcd answers it (the client may still be reconnecting after heal). */
async function guardedPutAnswered(lease: EtcdLease, key: string, value: string): Promise<unknown> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await guardedPut(lease, key, value);
      return 'accepted';
    } catch (error) {
      if (!isFencekitError(error, 'backend-unavailable') || Date.now() > deadline) return error;
      await delay(250);
    }
  }
}

beforeAll(async () => {
  cluster = await startCluster({ topology: 'etcd', nodes: 3, proxy: true });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await cluster.faults.heal();
});
afterAll(async () => {
  await cluster?.close();
});

describe('etcd lock under faults', () => {
  it('a SIGKILLed holder process frees the lock within the lease TTL + 1 s', async () => {
    const resource = 'killed-holder';
    const child = spawn(
      process.execPath,
      [holderScript, cluster.endpoints.join(','), prefix, resource, '2000'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const lines = createInterface({ input: child.stdout });
      const [line] = (await Promise.race([once(lines, 'line'), delay(20_000).then(() => [undefined])])) as [
        string | undefined,
      ];
      expect(line, 'the holder process never reported holding the lock').toBeDefined();
      const held = JSON.parse(line as string) as { fence: string; grantedTtlMs: number };

      const waiting = client(cluster.endpoints).acquire(resource, { ttlMs: 2_000, waitMs: 20_000 });
      await delay(300);
      const killedAt = monotonicNow();
      child.kill('SIGKILL');
      const lease = await waiting;
      const waited = monotonicNow() - killedAt;
      console.info(
        `[etcd faults] killed holder: next waiter granted ${waited.toFixed(0)} ms after SIGKILL (granted TTL ${held.grantedTtlMs} ms)`,
      );
      expect(lease.fence).toBeGreaterThan(BigInt(held.fence));
      expect(waited).toBeLessThanOrEqual(held.grantedTtlMs + 1_000);
      await lease.release();
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    }
  });

  for (const fault of ['partition', 'cutClients'] as const) {
    it(`isolating the holder's member (${fault}): its signal aborts before anyone else is granted, and etcd refuses its guarded write`, async () => {
      const { follower, others } = await pickFollower();
      const resource = `isolated-${fault}`;
      const dataKey = `${prefix}/data/${resource}`;
      const log = new ResourceLog();
      const holder = client([endpointOf(follower)]);
      const other = client(others.map(endpointOf));

      const lease = await holder.acquire(resource, { ttlMs: 2_000 });
      lease.signal.addEventListener('abort', () => log.record('holder lost'), { once: true });
      // For comparison: etcd3's own lease of the same TTL on the same connection, and when it says "lost".
      const theirs = holder.etcd.lease(2);
      theirs.on('lost', () => log.record('etcd3 lease lost'));
      await theirs.grant();
      await guardedPut(lease, dataKey, 'holder');
      const waiting = other.acquire(resource, { ttlMs: 2_000, waitMs: 30_000 }).then((next) => {
        log.record('other granted');
        return next;
      });
      await delay(300);

      log.record('isolating');
      if (fault === 'partition') await cluster.faults.partition({ isolate: follower });
      else await cluster.faults.cutClients(follower);
      const next = await waiting;
      const margin = log.at('other granted') - log.at('holder lost');
      console.info(
        `[etcd faults] ${fault}: holder's signal aborted ${margin.toFixed(0)} ms before the other client was granted`,
      );
      expect(log.at('holder lost')).toBeLessThan(log.at('other granted'));
      // Counted from the last answered keep-alive, so within one TTL of the cut (plus timer lateness
      // on a busy machine) — not etcd3's 2 × TTL.
      expect(log.at('holder lost') - log.at('isolating')).toBeLessThan(2_000 + 500);
      for (
        let waited = 0;
        !log.entries.some((e) => e.event === 'etcd3 lease lost') && waited < 8_000;
        waited += 100
      ) {
        await delay(100);
      }
      const theirsAfter = log.entries.find((e) => e.event === 'etcd3 lease lost');
      console.info(
        `[etcd faults] ${fault}: lease.signal aborted ${(log.at('holder lost') - log.at('isolating')).toFixed(0)} ms after the cut; ` +
          `etcd3's Lease said "lost" ${theirsAfter ? `${(theirsAfter.at - log.at('isolating')).toFixed(0)} ms` : 'not within 8 s'} after it`,
      );
      theirs.release();
      expect(lease.held).toBe(false);
      await guardedPut(next, dataKey, 'other');

      await cluster.faults.heal();
      const stale = await guardedPutAnswered(lease, dataKey, 'stale holder');
      expect(isFencekitError(stale, 'stale-fence'), `the stale write got: ${String(stale)}`).toBe(true);
      expect(await other.etcd.get(dataKey).string()).toBe('other');
      await next.release();
    });
  }

  it("cutting the leader's clients: its leadership.signal aborts before the next candidate leads", async () => {
    const { follower, others } = await pickFollower();
    const log = new ResourceLog();
    const name = 'isolated-election';
    const first = client([endpointOf(follower)]).election(name, { ttlMs: 2_000 });
    const second = client(others.map(endpointOf)).election(name, { ttlMs: 2_000 });
    const leadership = await first.campaign('first');
    leadership.signal.addEventListener('abort', () => log.record('first lost'), { once: true });
    const next = second.campaign('second', { waitMs: 30_000 }).then((won) => {
      log.record('second leads');
      return won;
    });
    await delay(300);
    await cluster.faults.cutClients(follower);
    const won = await next;
    expect(log.at('first lost')).toBeLessThan(log.at('second leads'));
    expect(won.term).toBeGreaterThan(leadership.term);
    expect((await second.leader())?.candidate).toBe('second');
    await won.resign();
  });

  it('killing the leader member leaves a lock held through a surviving member held', async () => {
    const { follower, others } = await pickFollower();
    const leader = await cluster.leader();
    const bystander = others.find((id) => id !== leader) as string;
    const resource = 'leader-killed';
    const holder = client([endpointOf(follower)]);
    const other = client([endpointOf(bystander)]);
    const lease = await holder.acquire(resource, { ttlMs: 5_000 });

    await cluster.faults.kill(leader as string);
    // Through the election and well past one TTL.
    await delay(lease.grantedTtlMs + 2_000);
    expect(lease.signal.aborted, String(lease.signal.reason)).toBe(false);
    expect(lease.held).toBe(true);
    expect(await other.tryAcquire(resource, { ttlMs: 5_000 })).toBeNull();
    await guardedPut(lease, `${prefix}/data/${resource}`, 'still the holder');
    await lease.release();
  });
});
