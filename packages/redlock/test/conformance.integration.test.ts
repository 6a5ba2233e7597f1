import { injectCluster } from '@fencekit/cluster/vitest';
import { describeLockConformance } from '@fencekit/core/testing';
import { RedlockClient } from '@fencekit/redlock';

const { endpoints } = injectCluster('redlock');

describeLockConformance('redlock', {
  createClient: async () =>
    new RedlockClient({ nodes: endpoints.map((e) => `redis://${e}`), nodeTimeoutMs: 250 }),
  // Redlock cannot promise fences (see the README); everything else it must meet. The per-node
  // timeout is generous because the test machine is shared and heavily loaded.
  capabilities: { safeFences: false, fair: true, blocking: true, expiry: true, cleanClose: true },
  ttlMs: 500,
});
