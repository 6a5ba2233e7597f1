import { type Cluster, type ClusterOptions, startCluster } from '@fencekit/cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footprint, leftovers } from './leftovers.js';

/**
 * A describe block around one cluster shared by its tests (a start costs seconds, a JVM per ZooKeeper member).
 * Its last test closes the cluster and checks that close(), twice since it is idempotent, leaves no process, dir,
 * container or network behind.
 */
export function describeCluster(
  title: string,
  options: ClusterOptions,
  tests: (cluster: () => Cluster) => void,
): void {
  describe(title, () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await startCluster(options);
    });
    afterAll(() => cluster?.close());

    tests(() => cluster);

    it('close() leaves no process, dir, container or network behind', async () => {
      const print = footprint(cluster);
      await cluster.close();
      await cluster.close();
      expect(leftovers(print)).toEqual([]);
    });
  });
}

/** Starts a cluster for one test, runs `body`, closes it (twice: idempotent) and checks nothing is left behind. */
export async function withCluster(
  options: ClusterOptions,
  body: (cluster: Cluster) => Promise<void>,
): Promise<void> {
  const cluster = await startCluster(options);
  const print = footprint(cluster);
  try {
    await body(cluster);
  } finally {
    await cluster.close();
    await cluster.close();
  }
  expect(leftovers(print)).toEqual([]);
}
