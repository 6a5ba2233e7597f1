import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('redis', {
  test: { globalSetup: ['test/support/global-setup.ts'] },
});
