import { ZOOKEEPER_FOLLOWER_LAG_MS } from '@fencekit/cluster';
import { ZkElectionClient, type ZkLease, ZkLockClient, ZkSession } from '@fencekit/zk';
import { FAULT_NAMES } from '../nemesis/faults.js';
import { clusterBackend } from './cluster-backend.js';

/**
 * ZooKeeper on a 3-node ensemble: ephemeral-sequential lock and election, fence = the lock node's
 * czxid. One session per client process serves both; its timeout is the run's TTL, but at least twice
 * the ensemble's follower lag (syncLimit × tickTime = 2 s): validity is the timeout less that lag, so
 * a shorter session would be refused (and a barely longer one would leave leases a sliver).
 */
/** The ensemble grants any timeout from 2 ticks (1 s) to maxSessionTimeout (60 s): asked = negotiated. */
export const zkSessionMs = (ttlMs: number) => Math.max(2 * ZOOKEEPER_FOLLOWER_LAG_MS, ttlMs);
const sessionMs = zkSessionMs;

/** The ensembles' maxSessionTimeout (zoo.cfg): a longer ask would be negotiated down, silently. */
const ZK_MAX_SESSION_MS = 60_000;

/**
 * Why `--session` cannot be this ZooKeeper session timeout, or undefined when it can. The adapter's
 * own rule decides (a session that leaves a lease no validity after the ensemble's follower lag is
 * refused): a ZkSession only checks its options when built and connects lazily, so this opens nothing.
 */
export function zkSessionProblem(ms: number): string | undefined {
  if (ms > ZK_MAX_SESSION_MS) return `at most ${ZK_MAX_SESSION_MS} ms (the ensembles' maxSessionTimeout)`;
  try {
    new ZkSession({ servers: '127.0.0.1:1', sessionTimeoutMs: ms, followerLagMs: ZOOKEEPER_FOLLOWER_LAG_MS });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export const zkBackend = clusterBackend({
  name: 'zk',
  description: 'ZooKeeper 3-node ensemble (@fencekit/zk)',
  topology: 'zookeeper',
  nodes: 3,
  safeFences: true,
  faults: FAULT_NAMES,
  defaultTtlMs: 1_000,
  sessionMs,
  nativeElection: true,
  async connect({ endpoints, namespace, ttlMs, sessionMs: asked }) {
    const root = `/${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const locks = new ZkLockClient({
      servers: endpoints,
      // `--session` sets it apart from the TTL (a lock TTL longer than the session is a case to test).
      sessionTimeoutMs: asked ?? sessionMs(ttlMs),
      followerLagMs: ZOOKEEPER_FOLLOWER_LAG_MS,
      root,
    });
    const elections = new ZkElectionClient({ session: locks.session, root });
    const created = new Set<string>();
    return {
      locks,
      elections,
      async guardedWrite(lease, key, value) {
        const path = `${root}/data/${key}`;
        if (!created.has(path)) {
          await locks.session.mkdirp(path);
          created.add(path);
        }
        await locks.guardedWrite(lease as ZkLease, path, Buffer.from(value));
      },
      async close() {
        await elections.close();
        await locks.close();
      },
    };
  },
});
