import { sentinelSplitSuite } from './support/sentinel-suite.js';

sentinelSplitSuite('local');
