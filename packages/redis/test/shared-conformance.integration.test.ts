import { describeReadWriteLockConformance, describeSemaphoreConformance } from '@fencekit/core/testing';
import { RedisSharedLockClient } from '@fencekit/redis';
import { redisEndpoint } from './support/endpoint.js';

const endpoint = redisEndpoint();
const createClient = async () => new RedisSharedLockClient({ connection: `redis://${endpoint}` });

describeSemaphoreConformance('redis', { createClient, ttlMs: 500 });
describeReadWriteLockConformance('redis', { createClient, ttlMs: 500 });
