import { clusterGlobalSetup } from '@fencekit/cluster/vitest';
import { retried } from './support/retry.js';

/** One real 3-node ensemble shared by every test file that needs no faults. */
const setup = clusterGlobalSetup({ zookeeper: { topology: 'zookeeper', nodes: 3 } });

/** Up to 3 attempts (see `retried`). */
export default function setupWithRetry(project: Parameters<typeof setup>[0]) {
  return retried(3, () => setup(project));
}
