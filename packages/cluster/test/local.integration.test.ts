import { describe } from 'vitest';
import { faultSuite } from './support/fault-suite.js';
import { topologySuite } from './support/topology-suite.js';

describe('local provider: topologies', () => topologySuite('local'));
describe('local provider: faults', () => faultSuite('local'));
