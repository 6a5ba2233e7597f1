import { dockerAvailable } from '@fencekit/cluster';
import { describe } from 'vitest';
import { faultSuite } from './support/fault-suite.js';
import { topologySuite } from './support/topology-suite.js';

// CI starts dockerd; on a machine without an engine these are skipped, and say why.
const engine = await dockerAvailable();
if (!engine) console.warn('[cluster] docker provider tests SKIPPED: no Docker engine answers `docker info`');
const reason = engine ? '' : ' (skipped: no Docker engine answers)';

describe.skipIf(!engine)(`docker provider: topologies${reason}`, () => topologySuite('docker'));
describe.skipIf(!engine)(`docker provider: faults${reason}`, () => faultSuite('docker'));
