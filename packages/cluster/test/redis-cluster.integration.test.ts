import { redisClusterSuite } from './support/redis-cluster-suite.js';

redisClusterSuite('local');
