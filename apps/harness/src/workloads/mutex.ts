import { fail, ok } from '../client/recorder.js';
import { lockedSections } from './acquire.js';
import type { Workload } from './types.js';

/**
 * Critical sections timed by the resource: acquire → enter (the resource records the entry, and
 * refuses a stale fence when fencing is on) → hold for the window → leave → release.
 */
export const mutex: Workload = (ctx) =>
  lockedSections(ctx, 'section', async (_lease, fence) => {
    const { resource, recorder } = ctx;
    const entered = await recorder.op('enter', { fence: fence ?? null }, async () => {
      const { accepted } = await resource.enter(recorder.process, fence);
      return accepted ? ok() : fail({ reason: 'stale fence refused' });
    });
    if (entered.type === 'ok') {
      await ctx.window('section');
      await recorder.op('leave', { fence: fence ?? null }, async () => {
        await resource.leave(recorder.process, fence);
        return ok();
      });
    }
    return 'more';
  });
