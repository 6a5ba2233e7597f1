import { clusterGlobalSetup } from '@fencekit/cluster/vitest';

/** Five independent masters shared by the test files that do not kill nodes. */
export default clusterGlobalSetup({ redlock: { topology: 'redis-independent', nodes: 5 } });
