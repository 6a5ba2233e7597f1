import { describeLockConformance } from '@fencekit/core/testing';
import { RedisLockClient } from '@fencekit/redis';
import { redisEndpoint } from './support/endpoint.js';

const endpoint = redisEndpoint();

describeLockConformance('redis', {
  createClient: async () => new RedisLockClient({ connection: `redis://${endpoint}` }),
  capabilities: { safeFences: true, fair: true, blocking: true, expiry: true, cleanClose: true },
  ttlMs: 500,
});
