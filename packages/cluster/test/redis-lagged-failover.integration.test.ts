import { describe } from 'vitest';
import { laggedFailoverSuite } from './support/lagged-failover-suite.js';

describe('lagged failover (local)', () => laggedFailoverSuite('local'));
