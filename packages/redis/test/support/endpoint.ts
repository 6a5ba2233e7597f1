import { injectCluster } from '@fencekit/cluster/vitest';

/** "127.0.0.1:port" of the redis-server started for this package's tests. */
export function redisEndpoint(): string {
  const [endpoint] = injectCluster('redis').endpoints;
  if (endpoint === undefined) throw new Error('the redis cluster has no endpoint');
  return endpoint;
}
