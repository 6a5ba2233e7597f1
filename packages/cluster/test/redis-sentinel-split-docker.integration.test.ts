import { dockerAvailable } from '@fencekit/cluster';
import { describe } from 'vitest';
import { sentinelSplitSuite } from './support/sentinel-suite.js';

const engine = await dockerAvailable();
if (!engine)
  console.warn(
    '[cluster] docker redis-sentinel-split-docker tests SKIPPED: no Docker engine answers `docker info`',
  );
describe.skipIf(!engine)('docker', () => sentinelSplitSuite('docker'));
