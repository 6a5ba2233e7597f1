import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('cluster', {
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Integration files start real servers; run them one at a time on this shared 2-core machine.
    fileParallelism: false,
    testTimeout: 60_000,
  },
});
