import { inject } from 'vitest';
import { startCluster } from '../start.js';
import type {
  Cluster,
  ClusterOptions,
  ClusterProvider,
  ProviderName,
  SentinelEndpoints,
  Topology,
} from '../types.js';

/** What test files see of a cluster started in globalSetup: plain data, since it crosses to the workers. */
export interface SharedCluster {
  readonly topology: Topology;
  readonly provider: ClusterProvider;
  readonly endpoints: readonly string[];
  readonly nodes: readonly {
    readonly id: string;
    readonly endpoint: string;
    readonly directEndpoint: string;
  }[];
  /** redis-sentinel: the master name and the Sentinels (a conformance suite connects through them). */
  readonly sentinel?: SentinelEndpoints;
  /** redis-sentinel, redis-cluster: announced address → client endpoint, for ioredis' `natMap`. */
  readonly natMap?: Readonly<Record<string, { readonly host: string; readonly port: number }>>;
}

declare module 'vitest' {
  interface ProvidedContext {
    [key: `fencekit-cluster:${string}`]: SharedCluster;
  }
}

/** The part of Vitest's TestProject this helper needs. */
interface Provider {
  provide(key: string, value: unknown): void;
}

/**
 * Builds a Vitest `globalSetup` function that starts the named clusters in parallel before any test file runs,
 * provides their endpoints to the test files (read them with `injectCluster(name)`), and closes them all after
 * the run. When an option set has no `provider`, the env var `FENCEKIT_PROVIDER` (local | docker) decides, so
 * CI can run the same suite on both.
 *
 * ```ts
 * // test/global-setup.ts
 * export default clusterGlobalSetup({ etcd: { topology: 'etcd', nodes: 3 } });
 * // in a test: const { endpoints } = injectCluster('etcd');
 * ```
 */
export function clusterGlobalSetup(clusters: Readonly<Record<string, ClusterOptions>>) {
  return async function setup(project: Provider): Promise<() => Promise<void>> {
    const envProvider = process.env.FENCEKIT_PROVIDER as ProviderName | undefined;
    const started: Cluster[] = [];
    const closeAll = async () => {
      await Promise.all(started.map((c) => c.close()));
    };
    try {
      await Promise.all(
        Object.entries(clusters).map(async ([name, options]) => {
          const cluster = await startCluster({
            ...options,
            provider: options.provider ?? envProvider ?? 'local',
          });
          started.push(cluster);
          project.provide(`fencekit-cluster:${name}`, share(cluster));
        }),
      );
    } catch (error) {
      await closeAll();
      throw error;
    }
    return closeAll;
  };
}

/** The cluster `name` started by `clusterGlobalSetup`, inside a test file. */
export function injectCluster(name: string): SharedCluster {
  const shared = inject(`fencekit-cluster:${name}`);
  if (!shared)
    throw new Error(`No cluster "${name}" was provided: add it to clusterGlobalSetup({ ${name}: … })`);
  return shared;
}

function share(cluster: Cluster): SharedCluster {
  return {
    topology: cluster.topology,
    provider: cluster.provider,
    endpoints: [...cluster.endpoints],
    nodes: cluster.nodes.map((n) => ({ id: n.id, endpoint: n.endpoint, directEndpoint: n.directEndpoint })),
    ...(cluster.sentinel ? { sentinel: cluster.sentinel } : {}),
    ...(cluster.natMap ? { natMap: cluster.natMap } : {}),
  };
}
