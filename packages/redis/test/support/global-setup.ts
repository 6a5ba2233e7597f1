import { clusterGlobalSetup } from '@fencekit/cluster/vitest';

/** One redis-server shared by this package's test files; each test uses its own resource names. */
export default clusterGlobalSetup({ redis: { topology: 'redis', nodes: 1 } });
