import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Cluster } from '@fencekit/cluster';
import { injectCluster } from '@fencekit/cluster/vitest';
import { isFencekitError, LockLostError, monotonicNow } from '@fencekit/core';
import {
  createSession,
  GuardedWriteRefusedError,
  UNSURE,
  ZkElection,
  type ZkLease,
  ZkLockClient,
} from '@fencekit/zk';
import { afterEach, describe, expect, it } from 'vitest';
import { ZkCode, zkCode } from '../src/zk-errors.js';
import { followerLagMs, startEnsemble } from './support/ensemble.js';
import { ResourceLog } from './support/resource-log.js';
import { stopsServing } from './support/serving.js';

/**
 * Longer than the servers' syncLimit × tickTime (2 s): a server cut off from its peers must drop its
 * clients before their sessions can expire on the other side.
 */
const sessionTimeoutMs = 4_000;
const holderScript = fileURLToPath(new URL('./fixtures/holder.mjs', import.meta.url));
const leaderScript = fileURLToPath(new URL('./fixtures/leader.mjs', import.meta.url));

const open: { close(): Promise<void> }[] = [];
function track<T extends { close(): Promise<void> }>(thing: T): T {
  open.push(thing);
  return thing;
}
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((t) => t.close()));
});

function resourceName(label: string): string {
  return `faults/${label}/${Math.random().toString(36).slice(2)}`;
}

/**
 * Runs a fixture (`holder.mjs`, `leader.mjs`) in a child process and waits, at most 20 s, for its first
 * line, `<what> <number>` once it holds or leads: returns the process and that number (fence or term).
 */
async function startFixture(
  script: string,
  args: string[],
  failure: string,
): Promise<{ child: ChildProcess; value: bigint }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  track({ close: async () => void child.kill('SIGKILL') });
  const [line] = (await once(child.stdout!, 'data', { signal: AbortSignal.timeout(20_000) }).catch(() => {
    throw new Error(failure);
  })) as [Buffer];
  return { child, value: BigInt(line.toString().trim().split(' ')[1]!) };
}

async function createDataNode(client: ZkLockClient, path: string): Promise<void> {
  await client.session.mkdirp(path);
}

async function readData(client: ZkLockClient, path: string): Promise<string> {
  const { data } = await client.session.getData(path);
  return data?.toString() ?? '';
}

describe('zookeeper under faults', () => {
  it('a killed holder process frees the lock within the session timeout + 1 s', async () => {
    const servers = injectCluster('zookeeper').endpoints.join(',');
    const resource = resourceName('killed-holder');
    const { child, value: heldFence } = await startFixture(
      holderScript,
      [servers, resource, String(sessionTimeoutMs), String(followerLagMs)],
      'holder process never held the lock',
    );

    const waiter = track(new ZkLockClient({ servers, sessionTimeoutMs, followerLagMs }));
    const waiting = waiter.acquire(resource, { ttlMs: 10_000, waitMs: sessionTimeoutMs * 4 });
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = monotonicNow();
    child.kill('SIGKILL');
    const lease = await waiting;
    const afterMs = monotonicNow() - killedAt;
    expect(afterMs).toBeLessThan(waiter.session.sessionTimeoutMs + 1_000);
    expect(lease.fence).toBeGreaterThan(heldFence);
    await lease.release();
  });

  it('a killed leader process hands leadership on within the session timeout + 1 s', async () => {
    const servers = injectCluster('zookeeper').endpoints.join(',');
    const name = resourceName('killed-leader');
    const { child, value: deadTerm } = await startFixture(
      leaderScript,
      [servers, name, String(sessionTimeoutMs), String(followerLagMs)],
      'the leader process never led',
    );

    const election = track(new ZkElection(name, { servers, sessionTimeoutMs, followerLagMs }));
    expect((await election.leader())?.candidate).toBe('doomed');
    const campaigning = election.campaign('heir', { waitMs: sessionTimeoutMs * 4 });
    campaigning.catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = monotonicNow();
    child.kill('SIGKILL');
    const leadership = await campaigning;
    expect(monotonicNow() - killedAt).toBeLessThan(election.session.sessionTimeoutMs + 1_000);
    expect(leadership.term).toBeGreaterThan(deadTerm);
    expect((await election.leader())?.candidate).toBe('heir');
    await leadership.resign();
  });

  describe('on a cluster with fault proxies', () => {
    let cluster: Cluster;
    afterEach(async () => {
      await cluster?.close();
    });

    async function holderAndWaiter(isolatedIndex: number) {
      const isolated = cluster.nodes[isolatedIndex]!;
      const others = cluster.nodes.filter((n) => n !== isolated).map((n) => n.endpoint);
      // A can reach only the node that will be isolated; B only the others.
      const a = track(new ZkLockClient({ servers: isolated.endpoint, sessionTimeoutMs, followerLagMs }));
      const b = track(new ZkLockClient({ servers: others.join(','), sessionTimeoutMs, followerLagMs }));
      return { isolated, a, b };
    }

    for (const fault of ['cutClients', 'partition'] as const) {
      it(`${fault}: the isolated holder stops before anyone else is granted, and ZooKeeper refuses its write`, async (context) => {
        cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3, proxy: true });
        const { isolated, a, b } = await holderAndWaiter(0);
        const resource = resourceName(fault);
        const dataPath = `/fencekit-test/${fault}-${Math.random().toString(36).slice(2)}`;
        await createDataNode(b, dataPath);
        const log = new ResourceLog();

        const leaseA = await a.acquire(resource, { ttlMs: 60_000 });
        leaseA.signal.addEventListener('abort', () => log.record('A', 'stopped'));
        await a.guardedWrite(leaseA, dataPath, Buffer.from('A1'));
        log.record('A', 'wrote A1');
        const waiting = b.acquire(resource, { ttlMs: 60_000, waitMs: sessionTimeoutMs * 6 }).then((lease) => {
          log.record('B', 'granted');
          return lease;
        });
        waiting.catch(() => {});
        await new Promise((r) => setTimeout(r, 300));

        if (fault === 'cutClients') {
          await cluster.faults.cutClients(isolated.id);
        } else {
          await cluster.faults.partition({ isolate: isolated.id });
          // A server cut from its peers stops serving after syncLimit × tickTime (2 s). If it does not,
          // the partition did not take and there is nothing to measure.
          if (!(await stopsServing(isolated.directEndpoint, 8_000))) {
            waiting.catch(() => {});
            context.skip(
              `partition({ isolate: ${isolated.id} }) left ${isolated.id} serving: the fault did not take`,
            );
          }
        }
        log.record('nemesis', fault);
        const leaseB = await waiting;

        expect(log.at('A', 'stopped'), log.describe()).toBeLessThan(log.at('B', 'granted'));
        const reason = leaseA.signal.reason as LockLostError;
        expect(reason).toBeInstanceOf(LockLostError);
        expect(reason.reason).toBe(UNSURE);
        expect(leaseB.fence).toBeGreaterThan(leaseA.fence);

        // A comes back believing nothing; ZooKeeper itself refuses its write.
        await cluster.faults.heal();
        const refused = await a.guardedWrite(leaseA, dataPath, Buffer.from('A2')).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(GuardedWriteRefusedError);
        expect(isFencekitError(refused, 'stale-fence')).toBe(true);
        await b.guardedWrite(leaseB, dataPath, Buffer.from('B1'));
        expect(await readData(b, dataPath)).toBe('B1');
        await leaseB.release();
      }, 240_000);
    }

    it('a call to a server that stops answering gives up at its own timeout, not a liveness tick later', async (context) => {
      cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3 });
      const node = cluster.nodes[0]!;
      // A long session (the servers grant at most 10 s): its liveness tick, ⅙ of it, would show.
      const session = track(
        createSession({ servers: node.endpoint, sessionTimeoutMs: 10_000, followerLagMs }),
      );
      await session.exists('/');
      await cluster.faults.pause(node.id);
      if (!(await stopsServing(node.directEndpoint, 5_000))) {
        context.skip(`pause(${node.id}) left it serving: the fault did not take`);
      }
      const started = monotonicNow();
      const error = await session.exists('/', undefined, { timeoutMs: 300 }).catch((e: unknown) => e);
      const tookMs = monotonicNow() - started;
      expect(zkCode(error), String(error)).toBe(ZkCode.OPERATION_TIMEOUT);
      expect(tookMs).toBeGreaterThanOrEqual(299);
      expect(tookMs).toBeLessThan(1_000);
      await cluster.faults.heal();
    }, 240_000);

    it('killing the ZooKeeper leader: a lock held through a surviving server stays held', async () => {
      cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3, proxy: true });
      const leaderId = await cluster.leader();
      expect(leaderId).toBeDefined();
      const survivor = cluster.nodes.find((n) => n.id !== leaderId)!;
      // The claim is about a session that outlives the failover, so give it room for a slow re-election
      // on a loaded machine (a 4 s session can expire while 2 cores elect a new leader).
      const failoverSessionMs = 12_000;
      const a = track(
        new ZkLockClient({ servers: survivor.endpoint, sessionTimeoutMs: failoverSessionMs, followerLagMs }),
      );
      const b = track(
        new ZkLockClient({
          servers: cluster.endpoints.join(','),
          sessionTimeoutMs: failoverSessionMs,
          followerLagMs,
        }),
      );
      const resource = resourceName('leader-killed');
      const dataPath = `/fencekit-test/leader-killed-${Math.random().toString(36).slice(2)}`;
      await createDataNode(b, dataPath);

      const lease = await a.acquire(resource, { ttlMs: 60_000 });
      let bGranted = false;
      const waiting = b.acquire(resource, { ttlMs: 60_000, waitMs: 60_000 }).then((l) => {
        bGranted = true;
        return l;
      });
      waiting.catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      await cluster.faults.kill(leaderId!);

      // The survivor drops its clients while it elects a new leader: A must stop, unsure…
      await new Promise<void>((resolve) => {
        if (lease.signal.aborted) resolve();
        else lease.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      expect((lease.signal.reason as LockLostError).reason).toBe(UNSURE);
      // …and once its session answers again, the lock is still its own, with the same fence.
      const reclaimed: ZkLease = await a.reclaim(lease, { ttlMs: 60_000 });
      expect(reclaimed.fence).toBe(lease.fence);
      expect(reclaimed.held).toBe(true);
      await a.guardedWrite(reclaimed, dataPath, Buffer.from('A after failover'));
      expect(bGranted).toBe(false);

      await reclaimed.release();
      const leaseB = await waiting;
      expect(leaseB.fence).toBeGreaterThan(lease.fence);
      await leaseB.release();
    }, 240_000);
  });
});
