import { createMemoryLockClient, MemoryLockServer } from '@fencekit/core';
import { describeLockConformance } from '@fencekit/core/testing';

const server = new MemoryLockServer();

describeLockConformance('memory', {
  createClient: async () => createMemoryLockClient({ server }),
  capabilities: { safeFences: true, fair: true, blocking: true },
});
