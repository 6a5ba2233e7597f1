import { clusterGlobalSetup } from '@fencekit/cluster/vitest';

/** One real 3-node ensemble shared by every test file that needs no faults. */
const setup = clusterGlobalSetup({ zookeeper: { topology: 'zookeeper', nodes: 3 } });

/**
 * Up to 3 attempts: on a loaded shared machine an ensemble occasionally misses its first leader
 * election within the start timeout.
 */
export default async function setupWithRetry(project: Parameters<typeof setup>[0]) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await setup(project);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}
