import { dockerAvailable } from '@fencekit/cluster';
import { describe } from 'vitest';
import { sentinelSuite } from './support/sentinel-suite.js';

const engine = await dockerAvailable();
if (!engine)
  console.warn(
    '[cluster] docker redis-sentinel-docker tests SKIPPED: no Docker engine answers `docker info`',
  );
describe.skipIf(!engine)('docker', () => sentinelSuite('docker'));
