import { fail, ok } from '../client/recorder.js';
import type { Workload } from './types.js';
import { sleep } from './util.js';

const MAX_ATTEMPTS = 10;

/**
 * The lock-free baseline: read stock and version, then write stock − 1 only if the version is
 * unchanged (optimistic concurrency at the resource). No lock, so no lock can fail it; the cost shows
 * as conflicts and retries, which the report counts.
 */
export const cas: Workload = async (ctx) => {
  const { resource, recorder, stopping } = ctx;
  while (!stopping.aborted) {
    let soldOut = false;
    await recorder.op('buy', { fence: null }, async () => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const { stock, version } = await resource.read(recorder.process);
        if (stock <= 0) {
          soldOut = true;
          return fail({ reason: 'sold out', stock });
        }
        await ctx.window('buy');
        const { accepted } = await resource.compareAndSet(recorder.process, stock - 1, version);
        if (accepted) return ok({ stock: stock - 1, attempts: attempt });
        await sleep(ctx.random() * 5);
      }
      return fail({ reason: 'conflicts', attempts: MAX_ATTEMPTS });
    });
    if (soldOut) return;
  }
};
