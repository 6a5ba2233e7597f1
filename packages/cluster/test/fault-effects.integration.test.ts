import { dockerAvailable } from '@fencekit/cluster';
import { describe } from 'vitest';
import { consensusEffectsSuite, effectsSuite } from './support/effects-suite.js';

describe('local provider: fault probes', () => {
  effectsSuite('local');
  consensusEffectsSuite('local');
});

const engine = await dockerAvailable();
if (!engine)
  console.warn('[cluster] docker fault probe tests SKIPPED: no Docker engine answers `docker info`');
describe.skipIf(!engine)(`docker provider: fault probes${engine ? '' : ' (skipped: no engine)'}`, () =>
  effectsSuite('docker'),
);
