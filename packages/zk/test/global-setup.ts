import { clusterGlobalSetup } from '@fencekit/cluster/vitest';

/** One real 3-node ensemble shared by every test file that needs no faults. */
export default clusterGlobalSetup({ zookeeper: { topology: 'zookeeper', nodes: 3 } });
