import { isFencekitError } from '@fencekit/core';
import { fail, ok } from '../client/recorder.js';
import { lockedSections } from './sections.js';
import type { Workload } from './types.js';

/**
 * The seed's first scenario: acquire → read stock → (window) → write stock − 1 with the fence →
 * release. Every purchase is one `buy` op between the `acquire` and `release` ops. With fencing on and
 * a store that can guard writes (etcd, ZooKeeper), the new stock is first written in the store under
 * its guard, and only a write the store accepted goes on to the resource (which checks the fence too).
 * The client checks that its lease is still valid before the window, as a careful client would, again
 * after the window as its write leaves, and once its write is done; the `buy` records every reading
 * (`value.lease`). The window is the gap the first check cannot close; the second reading does not
 * stop the write (the window stands for a write already on its way), it records what the client then
 * believed: a `held: true` read after a stall past the lease's real end is the lie the lease check
 * convicts (ZooKeeper with a TTL longer than its session, #13 bug 2).
 */
export const inventory: Workload = (ctx) =>
  lockedSections(ctx, 'stock', async (held) => {
    const { config, resource, recorder } = ctx;
    const fence = held.fence;
    let soldOut = false;
    const write = async (stock: number) => {
      if (config.fencing && ctx.guardedWrite) {
        // The store itself refuses the write once this grant is gone, whatever this client believes.
        try {
          await ctx.guardedWrite(held.lease, 'stock', String(stock - 1));
        } catch (error) {
          if (isFencekitError(error, 'stale-fence'))
            return fail({ reason: 'store refused: lock no longer held' });
          throw error;
        }
      }
      const { accepted } = await resource.write(recorder.process, stock - 1, fence);
      return accepted ? ok({ stock: stock - 1 }) : fail({ reason: 'stale fence refused', stock: stock - 1 });
    };
    await recorder.op('buy', { grant: held.grant, fence: fence ?? null }, async (note) => {
      const { stock } = await resource.read(recorder.process, fence);
      if (stock <= 0) {
        soldOut = true;
        return fail({ reason: 'sold out', stock });
      }
      const check = held.check();
      note({ lease: check });
      if (!check.held) return fail({ reason: 'lease ended before the write' });
      await ctx.window('buy');
      const sending = held.check();
      note({ lease: [check, sending] });
      try {
        return await write(stock);
      } finally {
        // Read again once the write is done, as a careful client does to know whether its lease held
        // throughout: a `held: true` after a stall past the lease's real end is the lie to catch.
        note({ lease: [check, sending, held.check()] });
      }
    });
    return soldOut ? 'done' : 'more';
  });
