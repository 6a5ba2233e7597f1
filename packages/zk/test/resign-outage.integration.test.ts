// A leader resigns while every server of the ensemble is stopped (SIGSTOP: nothing answers), and the
// servers come back before its session can expire. The resign cannot be confirmed, so it must end
// with a fencekit error (IndeterminateError), and the leader's node must still be withdrawn once the
// ensemble answers again: the session survives, and with it the node, so without that withdrawal the
// next candidate is never elected while the old leader's client lives (#13, bug 1, election side).
import type { Cluster } from '@fencekit/cluster';
import { isFencekitError, monotonicNow } from '@fencekit/core';
import { ZkElection } from '@fencekit/zk';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { followerLagMs, startEnsemble } from './support/ensemble.js';
import { liveAfter, trackHandles } from './support/live-handles.js';

const sessionTimeoutMs = 4_000;
/** Slack for a loaded machine (load 20-40 on 2 cores) on top of the bound under test. */
const slackMs = 6_000;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startEnsemble({ topology: 'zookeeper', nodes: 3 });
}, 120_000);
afterAll(async () => {
  await cluster?.close();
});
const open: { close(): Promise<void> }[] = [];
let tracker: ReturnType<typeof trackHandles> | undefined;
afterEach(async () => {
  tracker?.stop();
  await cluster.faults.heal();
  await Promise.allSettled(open.splice(0).map((thing) => thing.close()));
});

it('a resign the stopped ensemble never answered: IndeterminateError, and the next candidate is elected once it is back', async () => {
  const options = { servers: cluster.endpoints.join(','), sessionTimeoutMs, followerLagMs };
  const name = `resign-outage/${Math.random().toString(36).slice(2)}`;
  const a = new ZkElection(name, options);
  const b = new ZkElection(name, options);
  open.push(a, b);
  const lead = await a.campaign('A', { waitMs: 20_000 });
  const generation = a.session.generation;
  let electedAt: number | undefined;
  const next = b.campaign('B', { waitMs: 50_000 }).then((leadership) => {
    electedAt = monotonicNow();
    return leadership;
  });
  next.catch(() => {});
  // B queued behind A (its node exists) before the ensemble stops.
  const folder = lead.node.slice(0, lead.node.lastIndexOf('/'));
  for (let i = 0; i < 200 && (await a.session.children(folder)).children.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 25));
  }

  for (const node of cluster.nodes) await cluster.faults.pause(node.id);
  const resignStarted = monotonicNow();
  const first = await lead.resign().then(
    () => undefined,
    (error: unknown) => error,
  );
  const firstMs = monotonicNow() - resignStarted;
  // Back before A's session can expire: the session (and, on the old code, its node) survives.
  for (const node of cluster.nodes) await cluster.faults.resume(node.id);
  const resumedAt = monotonicNow();

  // A second resign is tried again (or waits for the withdrawal under way), not a cached rejection.
  const second = await lead.resign().then(
    () => 'resolved',
    (error: Error) => `${error.name} ${error.message}`,
  );
  const secondMs = monotonicNow() - resumedAt;
  const bound = sessionTimeoutMs + slackMs;
  const elected = await Promise.race([
    next.then(() => true),
    new Promise<false>((resolve) =>
      setTimeout(() => resolve(false), Math.max(0, bound - (monotonicNow() - resumedAt))),
    ),
  ]);
  const leader = await b.leader().catch((error: Error) => error.name);
  console.log(
    `resign during outage: first ${first instanceof Error ? first.name : 'resolved'} after ${Math.round(firstMs)} ms; second ${second} after ${Math.round(secondMs)} ms; B elected ${electedAt === undefined ? `not within ${bound} ms` : `${Math.round(electedAt - resumedAt)} ms`} after the resume; A's session ${a.session.generation === generation ? 'survived' : 'expired'}; leader ${JSON.stringify(leader, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))}`,
  );

  expect(first).toBeInstanceOf(Error);
  expect(isFencekitError(first)).toBe(true);
  expect((first as { code?: string }).code).toBe('indeterminate');
  // Resolved once the background withdrawal is done; under heavy load it may still be under way after
  // one more session timeout, but never the first call's rejection handed back at once.
  if (second !== 'resolved') {
    expect(second).toMatch(/^IndeterminateError/);
    expect(secondMs).toBeGreaterThanOrEqual(sessionTimeoutMs - 100);
  }
  expect(elected).toBe(true);
  expect(lead.isLeader).toBe(false);
  expect(leader).toMatchObject({ candidate: 'B' });
  if (elected) await (await next).resign();
}, 60_000);

it('close() after a resign the stopped ensemble never answered: bounded, and nothing left behind', async () => {
  tracker = trackHandles(/packages\/zk\/src|node-zookeeper-client|packages\/core\/src/);
  const options = { servers: cluster.endpoints.join(','), sessionTimeoutMs, followerLagMs };
  const a = new ZkElection(`resign-outage/close/${Math.random().toString(36).slice(2)}`, options);
  open.push(a);
  const lead = await a.campaign('A', { waitMs: 20_000 });
  for (const node of cluster.nodes) await cluster.faults.pause(node.id);
  const first = await lead.resign().then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isFencekitError(first)).toBe(true);
  // The background withdrawal is still waiting for the ensemble: close() ends it with the session.
  const started = monotonicNow();
  await a.close();
  const closeMs = monotonicNow() - started;
  console.log(`close() after the unconfirmed resign, ensemble stopped: ${Math.round(closeMs)} ms`);
  expect(closeMs).toBeLessThan(sessionTimeoutMs + 1_000 + slackMs);
  expect(await liveAfter(tracker, 200)).toEqual([]);
}, 60_000);
