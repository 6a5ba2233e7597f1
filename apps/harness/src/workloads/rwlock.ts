import type { Fence, ReadWriteLease } from '@fencekit/core';
import { fail, ok } from '../client/recorder.js';
import { acquireShared, sharedLocksOf, sharedSections } from './shared-sections.js';
import type { Workload } from './types.js';

/** The register the read-write lock guards. */
const RESOURCE = 'register';

/**
 * Readers and writers on a register: each grant is a write one time in three, else a read. acquire →
 * check the lease (on the `enter` op) → enter (the resource records the mode; with fencing on it refuses
 * a writer whose fence is not above every fence that entered, and a reader whose fence is below an
 * entered writer's) → hold for the window → the access (`read` returns the register and the fence that
 * wrote it; `write` stores this grant's id, refused with fencing on once a higher fence has entered) →
 * leave → release. A holder paused in its window past its lease is what the `rwlock` check judges.
 */
export const rwlock: Workload = (ctx) => {
  const { config, recorder, resource } = ctx;
  const lock = sharedLocksOf(ctx).readWriteLock(`${config.namespace}:${RESOURCE}`);
  return sharedSections(
    ctx,
    (grant) => {
      const mode = ctx.random() < 1 / 3 ? 'write' : 'read';
      const write = mode === 'write';
      return acquireShared(
        ctx,
        RESOURCE,
        grant,
        { mode },
        {
          wait: (o) => (write ? lock.write(o) : lock.read(o)),
          once: (o) => (write ? lock.tryWrite(o) : lock.tryRead(o)),
        },
      );
    },
    async (held) => {
      const fence = held.fence;
      const mode = (held.lease as Partial<ReadWriteLease<Fence | undefined>>).mode;
      if (mode !== 'read' && mode !== 'write')
        throw new Error(`a read-write lease without a mode: ${String(mode)}`);
      const entered = await recorder.op(
        'enter',
        { grant: held.grant, mode, fence: fence ?? null },
        async (note) => {
          const check = held.check();
          note({ lease: check });
          if (!check.held) return fail({ reason: 'lease ended before entering' });
          const { accepted } = await resource.readWriteEnter(recorder.process, mode, fence);
          return accepted ? ok() : fail({ reason: 'stale fence refused' });
        },
      );
      if (entered.type !== 'ok') return;
      await ctx.window('section');
      await recorder.op(mode, { grant: held.grant, fence: fence ?? null }, async (note) => {
        note({ lease: held.check() });
        const answer =
          mode === 'write'
            ? await resource.readWriteWrite(recorder.process, held.grant, fence)
            : await resource.readWriteRead(recorder.process, fence);
        return answer.accepted ? ok(answer) : fail({ reason: 'stale fence refused', ...answer });
      });
      await recorder.op('leave', { fence: fence ?? null }, async (note) => {
        note({ lease: held.check() });
        await resource.readWriteLeave(recorder.process, fence);
        return ok();
      });
    },
  );
};
