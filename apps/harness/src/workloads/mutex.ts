import type { Fence, Lease } from '@fencekit/core';
import { fail, ok } from '../client/recorder.js';
import { takeLock } from './acquire.js';
import type { Workload } from './types.js';
import { fenceOf, sleep } from './util.js';

/**
 * Critical sections timed by the resource: acquire → enter (the resource records the entry, and
 * refuses a stale fence when fencing is on) → hold for the window → leave → release.
 */
export const mutex: Workload = async (ctx) => {
  const { config, locks, resource, recorder, stopping } = ctx;
  const key = `${config.namespace}:section`;
  while (!stopping.aborted) {
    let lease: Lease<Fence | undefined> | undefined;
    const acquired = await recorder.op('acquire', { resource: 'section' }, async () => {
      lease = await takeLock(locks, key, config, stopping, ctx.random);
      return ok({ fence: fenceOf(lease) ?? null });
    });
    if (acquired.type !== 'ok' || !lease) {
      await sleep(ctx.random() * 20, stopping);
      continue;
    }
    const held = lease;
    const fence = fenceOf(held);
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
    await recorder.op('release', { fence: fence ?? null }, async () => {
      await held.release();
      return ok();
    });
  }
};
