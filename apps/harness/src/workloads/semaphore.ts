import { fail, ok } from '../client/recorder.js';
import { acquireShared, semaphorePermits, sharedLocksOf, sharedSections } from './shared-sections.js';
import type { Workload } from './types.js';

/** The resource the semaphore guards: a pool of slots whose concurrent users the resource counts. */
const RESOURCE = 'slots';

/**
 * "At most N at a time": a semaphore of N permits (half the clients), each grant taking 1 permit, or 2
 * one time in four when N allows, so weights are exercised. acquire → check the lease (recorded on the
 * `enter` op as `value.lease`) → enter the pool (the resource records the entry, its permits and the
 * limit, and counts who is inside) → hold for the window → leave (with a second reading of the lease)
 * → release. The resource never refuses an entry, fencing or not: a semaphore's fence orders grants but
 * cannot tell a lapsed holder from the N valid ones (core's README), so a holder paused past its lease
 * that enters or stays is an excess the `semaphore` check convicts.
 */
export const semaphore: Workload = (ctx) => {
  const { config, recorder, resource } = ctx;
  const limit = semaphorePermits(config.clients);
  const handle = sharedLocksOf(ctx).semaphore(`${config.namespace}:${RESOURCE}`, { permits: limit });
  return sharedSections(
    ctx,
    (grant) => {
      const permits = limit >= 2 && ctx.random() < 0.25 ? 2 : 1;
      return acquireShared(
        ctx,
        RESOURCE,
        grant,
        { permits, limit },
        {
          wait: (o) => handle.acquire({ ...o, permits }),
          once: (o) => handle.tryAcquire({ ...o, permits }),
        },
      );
    },
    async (held) => {
      const fence = held.fence;
      const permits = (held.lease as { permits?: number }).permits ?? 1;
      const entered = await recorder.op(
        'enter',
        { grant: held.grant, fence: fence ?? null },
        async (note) => {
          const check = held.check();
          note({ lease: check });
          if (!check.held) return fail({ reason: 'lease ended before entering' });
          const { inside } = await resource.semaphoreEnter(recorder.process, permits, limit, fence);
          return ok({ inside });
        },
      );
      if (entered.type !== 'ok') return;
      await ctx.window('section');
      await recorder.op('leave', { fence: fence ?? null }, async (note) => {
        note({ lease: held.check() });
        await resource.semaphoreLeave(recorder.process, fence);
        return ok();
      });
    },
  );
};
