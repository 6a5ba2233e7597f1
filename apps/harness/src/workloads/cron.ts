import type { Fence, Lease } from '@fencekit/core';
import { grantFact, observe } from '../client/lease-facts.js';
import { fail, ok } from '../client/recorder.js';
import { grantIds } from './sections.js';
import type { Workload } from './types.js';
import { sleep } from './util.js';

/**
 * N workers, one job per tick, deduplicated by a lock "for efficiency": the first worker to take the
 * tick's lock runs the job and keeps the lock until it expires (two ticks). A worker that falls behind
 * (paused, slow) fires the ticks it missed when it wakes, as schedulers with a fire-now misfire policy
 * do; if the tick's lock has expired by then, the job runs twice — the duplicate the report counts.
 */
export const cron: Workload = async (ctx) => {
  const { config, locks, resource, recorder, stopping } = ctx;
  const epoch = performance.timeOrigin + performance.now();
  // Ticks are numbered on the wall clock's grid shared by all workers, so they agree on tick numbers.
  let tick = Math.floor(epoch / config.tickMs) + 1;
  const nextGrant = grantIds(config.index);
  while (!stopping.aborted) {
    const due = tick * config.tickMs - (performance.timeOrigin + performance.now());
    if (due > 0) await sleep(due, stopping);
    if (stopping.aborted) return;
    const key = `${config.namespace}:cron:${tick}`;
    const current = tick;
    const grant = nextGrant();
    let held: Lease<Fence | undefined> | undefined;
    // Each tick's lock is its own resource; the lease is never released (it keeps the tick taken).
    await recorder.op('lock', { tick: current, resource: `cron:${current}` }, async () => {
      const lease = await locks.tryAcquire(key, { ttlMs: config.tickMs * 2 });
      if (!lease) return fail({ tick: current, reason: 'held' });
      held = lease;
      const request = { ttlMs: config.tickMs * 2, sends: ctx.sends };
      return ok({ tick: current, ...grantFact(lease, grant, `cron:${current}`, request) });
    });
    if (held) {
      const lease = held;
      const fence = lease.fence === undefined ? undefined : lease.fence.toString();
      await ctx.window('run');
      // The worker runs the tick it was granted whatever its lease says now (the misfire policy);
      // what it saw is recorded all the same.
      await recorder.op('run', { tick: current }, async (note) => {
        note({ lease: observe(lease, grant) });
        await resource.run(recorder.process, current, fence);
        return ok({ tick: current });
      });
    }
    tick++;
  }
};
