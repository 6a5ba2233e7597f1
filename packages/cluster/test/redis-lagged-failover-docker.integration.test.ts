import { dockerAvailable } from '@fencekit/cluster';
import { describe } from 'vitest';
import { laggedFailoverSuite } from './support/lagged-failover-suite.js';

const engine = await dockerAvailable();
if (!engine)
  console.warn(
    '[cluster] docker redis-lagged-failover-docker tests SKIPPED: no Docker engine answers `docker info`',
  );
describe.skipIf(!engine)('lagged failover (docker)', () => laggedFailoverSuite('docker'));
