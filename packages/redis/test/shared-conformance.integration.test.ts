import { describeReadWriteLockConformance, describeSemaphoreConformance } from '@fencekit/core/testing';
import { RedisSharedLockClient } from '@fencekit/redis';
import { redisEndpoint } from './support/endpoint.js';

const endpoint = redisEndpoint();
// A waiter queues after a refused first try and its SUBSCRIBE: at a load of 30 that took longer than
// the checks' 100 ms between arrivals, as the mutex's Sentinel and Cluster suites found.
const createClient = async () => new RedisSharedLockClient({ connection: `redis://${endpoint}` });

describeSemaphoreConformance('redis', { createClient, ttlMs: 500, timeScale: 2 });
describeReadWriteLockConformance('redis', { createClient, ttlMs: 500, timeScale: 2 });
