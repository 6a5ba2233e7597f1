import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('zk', {
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // Fault tests start their own ensembles: one file at a time, so they do not starve the shared one.
    fileParallelism: false,
    testTimeout: 60_000,
  },
});
