import { fencekitProject } from '../../vitest.shared.js';

export default fencekitProject('redlock', {
  test: { globalSetup: ['test/global-setup.ts'] },
});
