import { createMemorySharedLockClient, MemoryPermitServer } from '@fencekit/core';
import { describeReadWriteLockConformance, describeSemaphoreConformance } from '@fencekit/core/testing';

const server = new MemoryPermitServer();

describeSemaphoreConformance('memory', {
  createClient: async () => createMemorySharedLockClient({ server }),
});
describeReadWriteLockConformance('memory', {
  createClient: async () => createMemorySharedLockClient({ server }),
});
