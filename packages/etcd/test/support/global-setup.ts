import { clusterGlobalSetup } from '@fencekit/cluster/vitest';

/** One real 3-member etcd (local processes) shared by the conformance and integration test files. */
export default clusterGlobalSetup({ etcd: { topology: 'etcd', nodes: 3 } });
