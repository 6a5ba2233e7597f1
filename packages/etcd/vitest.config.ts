import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('etcd', {
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // Files share one cluster; running them one at a time keeps the shared machine calm.
    fileParallelism: false,
  },
});
