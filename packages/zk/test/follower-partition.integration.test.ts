// A holder connected only to a follower that is cut off from its peers: the follower keeps answering
// it for up to syncLimit × tickTime (2 s on the test ensembles) while the leader, which never hears of
// those requests, counts the session down from the last touch it saw. A holder that stalls then must
// not believe in its lock (or leadership) past the moment the ensemble may expire its session.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Cluster } from '@fencekit/cluster';
import { ZkElection, ZkLockClient } from '@fencekit/zk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { segmentFor } from '../src/paths.js';
import { followerLagMs, startEnsemble } from './support/ensemble.js';
import { fourLetter } from './support/four-letter.js';

/** What the fault tests use: twice the follower lag, so validity is about 1.9 s per answer. */
const sessionTimeoutMs = 4_000;
/**
 * How long the holder keeps probing after the cut: the follower answers for most of its 2 s, so the
 * holder's last answered request is sent late in it, where the old bound (⅔ of the session timeout
 * from that send) ran past the expiry the leader counts from before the cut.
 */
const probeMs = 1_800;
const script = fileURLToPath(new URL('./fixtures/partitioned-holder.mjs', import.meta.url));
/** The host-wide clock the fixture prints on (its timeOrigin + now). */
const sharedNow = () => performance.timeOrigin + performance.now();

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3, proxy: true });
}, 120_000);
afterAll(async () => {
  await cluster?.close();
});

/** Runs the fixture; `line(prefix)` waits (bounded) for its next line starting with `prefix`. */
function startHolder(mode: 'lock' | 'election', servers: string, name: string) {
  const child = spawn(
    process.execPath,
    [script, mode, servers, name, String(sessionTimeoutMs), String(followerLagMs)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const line = (prefix: string, withinMs: number) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        lines.off('line', onLine);
        reject(new Error(`holder: no "${prefix}" line within ${withinMs} ms`));
      }, withinMs);
      const onLine = (text: string) => {
        if (!text.startsWith(prefix)) return;
        clearTimeout(timer);
        lines.off('line', onLine);
        resolve(text);
      };
      lines.on('line', onLine);
    });
  return { child, line };
}

for (const mode of ['lock', 'election'] as const) {
  it(`${mode}: a holder on a cut-off follower that stalls never overlaps the next holder`, async (context) => {
    await cluster.faults.heal();
    const modes = await Promise.all(
      cluster.nodes.map((n) => fourLetter(n.directEndpoint, 'srvr').catch(() => '')),
    );
    const followerIndex = modes.findIndex((m) => m.includes('Mode: follower'));
    if (followerIndex < 0) return context.skip('no member reports Mode: follower');
    const follower = cluster.nodes[followerIndex]!;
    const others = cluster.nodes
      .filter((n) => n !== follower)
      .map((n) => n.endpoint)
      .join(',');
    const name = `follower-cut/${mode}/${Math.random().toString(36).slice(2)}`;

    const holder = startHolder(mode, follower.endpoint, name);
    const lock =
      mode === 'lock' ? new ZkLockClient({ servers: others, sessionTimeoutMs, followerLagMs }) : undefined;
    const election =
      mode === 'election'
        ? new ZkElection(name, { servers: others, sessionTimeoutMs, followerLagMs })
        : undefined;
    try {
      await holder.line('held', 30_000);
      let grantedAt = 0;
      const waiting = (
        lock
          ? lock.acquire(name, { ttlMs: 60_000, waitMs: 40_000 })
          : election!.campaign('heir', { waitMs: 40_000 })
      ).then((granted) => {
        grantedAt = sharedNow();
        return granted;
      });
      waiting.catch(() => {});
      // The waiter is queued behind the holder before the cut (bounded: 5 s).
      const session = lock?.session ?? election!.session;
      const folder = lock ? lock.folderOf(name) : `/fencekit/elections/${segmentFor(name)}`;
      for (let i = 0; i < 100; i++) {
        const queued = await session.children(folder).catch(() => ({ children: [] as string[] }));
        if (queued.children.length >= 2) break;
        await new Promise((r) => setTimeout(r, 50));
      }

      const read = holder.line('read', 30_000);
      await cluster.faults.partition({ isolate: follower.id });
      // The leader cannot have heard from the holder's session after this instant.
      const cutAt = sharedNow();
      holder.child.stdin!.write(`go ${probeMs}\n`);
      const [, held, validUntil, readAt] = (await read).split(' ');
      const granted = await waiting;

      console.log(
        `${mode}: held ${held}, valid until cut + ${Math.round(Number(validUntil) - cutAt)} ms, read at cut + ${Math.round(Number(readAt) - cutAt)} ms, next granted at cut + ${Math.round(grantedAt - cutAt)} ms`,
      );
      // The ensemble may expire the session one session timeout after the leader's last touch, which
      // came before the cut: validity must end by then, whatever the follower answered after it.
      expect(Number(validUntil), 'validity past the earliest possible expiry').toBeLessThanOrEqual(
        cutAt + sessionTimeoutMs,
      );
      // And no instant where both believe they hold.
      if (held === 'true')
        expect(Number(readAt), 'holder believed in it after the grant').toBeLessThan(grantedAt);
      await ('release' in granted ? granted.release() : granted.resign());
    } finally {
      holder.child.kill('SIGKILL');
      await lock?.close();
      await election?.close();
      await cluster.faults.heal();
    }
  }, 120_000);
}
