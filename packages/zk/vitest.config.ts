import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('zk', {
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // Fault tests start their own ensembles; two at a time is what a shared 2-core machine takes.
    maxWorkers: 2,
    testTimeout: 60_000,
  },
});
