import { fencekitProject } from '../../vitest.shared.js';

/**
 * Harness tests start real processes (clients, resource, servers) and share two cores with everything
 * else: files run one at a time, and a global setup builds dist/ first, since child processes run the
 * built JavaScript.
 */
export default fencekitProject('harness', {
  test: {
    globalSetup: ['test/support/build.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
  },
});
