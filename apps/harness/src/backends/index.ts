import type { BackendFactory, BackendName } from './types.js';

/**
 * The registry: backend name → its adapter-factory file, loaded on demand so a client process only
 * loads the driver it uses, and a backend whose package is missing fails alone, with its own message.
 */
const loaders: Record<BackendName, () => Promise<BackendFactory>> = {
  memory: async () => (await import('./memory.js')).memoryBackend,
  redis: async () => (await import('./redis.js')).redisBackend,
  redlock: async () => (await import('./redlock.js')).redlockBackend,
  zk: async () => (await import('./zk.js')).zkBackend,
  etcd: async () => (await import('./etcd.js')).etcdBackend,
  'redis-sentinel': async () => (await import('./redis-replicated.js')).redisSentinelBackend,
  'redis-cluster': async () => (await import('./redis-replicated.js')).redisClusterBackend,
  'redis-sentinel-epoch': async () => (await import('./redis-replicated.js')).redisSentinelEpochBackend,
  'redis-cluster-epoch': async () => (await import('./redis-replicated.js')).redisClusterEpochBackend,
  'redis-sentinel-wait': async () => (await import('./redis-replicated.js')).redisSentinelWaitBackend,
  'redis-cluster-wait': async () => (await import('./redis-replicated.js')).redisClusterWaitBackend,
};

export function loadBackend(name: BackendName): Promise<BackendFactory> {
  return loaders[name]();
}

export { BACKENDS, type BackendName } from './types.js';
