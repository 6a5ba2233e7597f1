import { clusterGlobalSetup } from '@fencekit/cluster/vitest';

/** One shared single-node Redis, to prove the globalSetup helper works for other packages. */
export default clusterGlobalSetup({ shared: { topology: 'redis' } });
