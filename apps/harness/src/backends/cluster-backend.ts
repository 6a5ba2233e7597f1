import type { Topology } from '@fencekit/cluster';
import type { BackendFactory, BackendName } from './types.js';

/** Server start-up code, loaded only by the coordinator: client processes never touch it. */
const servers = () => import('./cluster-deployment.js');

/** What a backend on @fencekit/cluster servers says about itself; `connect` is all its own code. */
export interface ClusterBackendSpec extends Omit<BackendFactory, 'preflight' | 'deploy'> {
  readonly topology: Topology;
  readonly nodes: number;
}

/**
 * A backend whose servers @fencekit/cluster starts: preflight and deploy are the same for all of them,
 * only the topology and node count differ.
 */
export function clusterBackend(spec: ClusterBackendSpec): BackendFactory {
  const { topology, nodes, ...factory } = spec;
  const name: BackendName = spec.name;
  return {
    ...factory,
    cluster: { topology, nodes },
    async preflight(provider) {
      await (await servers()).preflightCluster(topology, provider);
    },
    async deploy({ provider, signal, endpoints, ssh }) {
      if (provider === 'external') {
        return (await servers()).attachExternal(name, topology, endpoints ?? [], signal);
      }
      return (await servers()).deployCluster(name, topology, nodes, provider, signal, ssh);
    },
  };
}
