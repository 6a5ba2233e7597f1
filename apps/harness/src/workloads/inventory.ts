import type { Fence, Lease } from '@fencekit/core';
import { fail, ok } from '../client/recorder.js';
import type { Workload } from './types.js';
import { fenceOf, sleep } from './util.js';

/**
 * The seed's first scenario: acquire → read stock → (window) → write stock − 1 with the fence →
 * release. Every purchase is one `buy` op between the `acquire` and `release` ops. The client checks
 * that its lease is still valid before the window, as a careful client would; the window is the gap
 * that check cannot close.
 */
export const inventory: Workload = async (ctx) => {
  const { config, locks, resource, recorder, stopping } = ctx;
  const key = `${config.namespace}:stock`;
  while (!stopping.aborted) {
    let lease: Lease<Fence | undefined> | undefined;
    const acquired = await recorder.op('acquire', { resource: 'stock' }, async () => {
      lease = await locks.acquire(key, { ttlMs: config.ttlMs, waitMs: config.opTimeoutMs, signal: stopping });
      return ok({ fence: fenceOf(lease) ?? null });
    });
    if (acquired.type !== 'ok' || !lease) {
      await sleep(ctx.random() * 20, stopping);
      continue;
    }
    const held = lease;
    const fence = fenceOf(held);
    let soldOut = false;
    await recorder.op('buy', { fence: fence ?? null }, async () => {
      const { stock } = await resource.read(recorder.process, fence);
      if (stock <= 0) {
        soldOut = true;
        return fail({ reason: 'sold out', stock });
      }
      if (!held.held) return fail({ reason: 'lease ended before the write' });
      await ctx.window('buy');
      const { accepted } = await resource.write(recorder.process, stock - 1, fence);
      return accepted ? ok({ stock: stock - 1 }) : fail({ reason: 'stale fence refused', stock: stock - 1 });
    });
    await recorder.op('release', { fence: fence ?? null }, async () => {
      await held.release();
      return ok();
    });
    if (soldOut) return;
  }
};
