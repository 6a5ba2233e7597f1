import { dockerAvailable } from '@fencekit/cluster';
import { describe } from 'vitest';
import { redisClusterSuite } from './support/redis-cluster-suite.js';

const engine = await dockerAvailable();
if (!engine)
  console.warn('[cluster] docker redis-cluster-docker tests SKIPPED: no Docker engine answers `docker info`');
describe.skipIf(!engine)('docker', () => redisClusterSuite('docker'));
