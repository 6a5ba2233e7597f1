import { fail, ok } from '../client/recorder.js';
import { lockedSections } from './sections.js';
import type { Workload } from './types.js';

/**
 * Critical sections timed by the resource: acquire → check the lease (recorded on the `enter` op as
 * `value.lease`) → enter (the resource records the entry, and refuses a stale fence when fencing is
 * on) → hold for the window → leave (with a second reading of the lease) → release.
 */
export const mutex: Workload = (ctx) =>
  lockedSections(ctx, 'section', async (held) => {
    const { resource, recorder } = ctx;
    const fence = held.fence;
    const entered = await recorder.op('enter', { grant: held.grant, fence: fence ?? null }, async (note) => {
      const check = held.check();
      note({ lease: check });
      if (!check.held) return fail({ reason: 'lease ended before entering' });
      const { accepted } = await resource.enter(recorder.process, fence);
      return accepted ? ok() : fail({ reason: 'stale fence refused' });
    });
    if (entered.type === 'ok') {
      await ctx.window('section');
      await recorder.op('leave', { fence: fence ?? null }, async (note) => {
        // What the holder believes as it leaves: held through its section, or not.
        note({ lease: held.check() });
        await resource.leave(recorder.process, fence);
        return ok();
      });
    }
    return 'more';
  });
