import { serveClusterToParent, startCluster } from '@fencekit/cluster';

/** The benchmark's etcd cluster in a process of its own (see `serveClusterToParent`); prints its endpoints. */
const cluster = await startCluster({ topology: 'etcd', nodes: 3, provider: 'local' });
await serveClusterToParent(cluster, (c) => ({ endpoints: c.endpoints }));
