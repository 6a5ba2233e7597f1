import assert from 'node:assert/strict';
import { assertRejectsWithCode } from './context.js';
import type { LockCheck } from './lock-check.js';
import { HOSTILE_NAME_SUFFIXES, WELL_FORMED_NAME_SUFFIX } from './names.js';

export const nameChecks: readonly LockCheck[] = [
  {
    id: 'hostile-resource-names',
    title:
      'resource names with a lone surrogate, DEL or C0/C1 controls give InvalidArgumentError; astral names work',
    async run(context) {
      const client = await context.client();
      const ttlMs = context.ttlMs;
      for (const [what, suffix] of HOSTILE_NAME_SUFFIXES) {
        const resource = `${context.resource('names')}/${suffix}`;
        await assertRejectsWithCode(
          () => client.acquire(resource, { ttlMs, waitMs: context.scaled(1_000) }),
          'invalid-argument',
          `acquire: a resource name with ${what}`,
        );
        await assertRejectsWithCode(
          () => client.tryAcquire(resource, { ttlMs }),
          'invalid-argument',
          `tryAcquire: a resource name with ${what}`,
        );
      }
      // Refusing the hostile names must not refuse well-formed non-ASCII ones.
      const resource = `${context.resource('names')}/${WELL_FORMED_NAME_SUFFIX}`;
      const lease = await client.acquire(resource, { ttlMs: context.scaled(10_000) });
      assert.equal(lease.resource, resource);
      await lease.release();
      const again = await client.tryAcquire(resource, { ttlMs: context.scaled(10_000) });
      assert.ok(again, 'a released astral-named lock could not be taken again');
      await again.release();
    },
  },
];
