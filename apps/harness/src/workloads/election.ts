import { fail, ok } from '../client/recorder.js';
import { campaignWithLock, type HeldLeadership } from './lock-leadership.js';
import type { Workload } from './types.js';
import { sleep } from './util.js';

/** Claims a leader writes before stepping down, so leadership changes hands during a run. */
const CLAIMS_PER_TERM = 8;

/**
 * Candidates campaign; the leader writes term-stamped claims to the resource until it loses
 * leadership or has written its share, then resigns. The checker convicts two leaders at once and
 * claims accepted from a deposed leader.
 */
export const election: Workload = async (ctx) => {
  const { config, locks, elections, resource, recorder, stopping } = ctx;
  const name = `${config.namespace}:leader`;
  const native = elections?.election(name, { ttlMs: config.ttlMs });
  try {
    while (!stopping.aborted) {
      let leadership: HeldLeadership | undefined;
      const won = await recorder.op('campaign', { election: 'leader' }, async () => {
        if (native) {
          const l = await native.campaign(`client-${config.index}`, {
            signal: stopping,
            waitMs: config.opTimeoutMs,
          });
          leadership = {
            term: l.term.toString(),
            signal: l.signal,
            get isLeader() {
              return l.isLeader;
            },
            resign: () => l.resign(),
          };
        } else {
          leadership = await campaignWithLock(locks, name, config.ttlMs, config.opTimeoutMs);
        }
        return ok({ term: leadership.term });
      });
      if (won.type !== 'ok' || !leadership) {
        await sleep(ctx.random() * 20, stopping);
        continue;
      }
      const held = leadership;
      for (let i = 0; i < CLAIMS_PER_TERM && !stopping.aborted; i++) {
        if (!held.isLeader) break;
        await ctx.window('claim');
        const claimed = await recorder.op('claim', { term: held.term }, async () => {
          const { accepted } = await resource.claim(recorder.process, held.term, held.term);
          return accepted
            ? ok({ term: held.term })
            : fail({ term: held.term, reason: 'deposed term refused' });
        });
        if (claimed.type !== 'ok') break;
        await sleep(config.windowMs, stopping);
      }
      await recorder.op('resign', { term: held.term }, async () => {
        await held.resign();
        return ok();
      });
    }
  } finally {
    await native?.close();
  }
};
