import { randomUUID } from 'node:crypto';
import {
  type Contender,
  connect,
  contenders,
  type Locker,
  openFencekitSemaphore,
  openRedisSemaphore,
  TTL_MS,
} from './contenders.js';
import { handoffFloor } from './handoff-floor.js';

/**
 * One semaphore library (or floor) in the issue #19 benchmark: `open` gives one client of a
 * semaphore of `permits` on the first endpoint. To put another backend's semaphore beside these
 * (ZooKeeper's or etcd's, from their own benches), give its `open` to core's
 * `measureContendedPermits`: that ring is what the table's contended columns come from.
 */
export interface SemaphoreContender {
  readonly name: string;
  /** False for a floor, which has no way to wait for a permit. */
  readonly blocking: boolean;
  open(endpoints: readonly string[], permits: number): Locker;
}

/** The mutex floor of the other benchmark (SET NX PX + compare-and-delete), the permit count ignored. */
const mutexFloor = contenders.find((c) => c.name.startsWith('raw')) as Contender;

/**
 * What any leased counting semaphore on one Redis must send: one script to acquire (drop lapsed
 * holders, count, add self with its expiry) and one command to release (`ZREM`). No fence, no queue,
 * no fairness, no validity check, no lease object: the least a semaphore with expiring grants can do.
 */
const acquireFloor = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

const semaphoreFloor: SemaphoreContender = {
  name: 'raw semaphore floor: 1 EVALSHA + ZREM',
  blocking: false,
  open([endpoint], permits) {
    const redis = connect(endpoint as string);
    redis.defineCommand('benchAcquire', { numberOfKeys: 1, lua: acquireFloor });
    const acquire = (
      redis as unknown as {
        benchAcquire(
          key: string,
          limit: number,
          owner: string,
          now: number,
          until: number,
          ttl: number,
        ): Promise<number>;
      }
    ).benchAcquire.bind(redis);
    return {
      async lock(resource) {
        const owner = randomUUID();
        const now = Date.now();
        if ((await acquire(resource, permits, owner, now, now + TTL_MS, TTL_MS)) !== 1) {
          throw new Error(`raw semaphore floor: ${resource} is full`);
        }
        return async () => {
          await redis.zrem(resource, owner);
        };
      },
      async close() {
        await redis.quit();
      },
    };
  },
};

const fencekitSemaphore: SemaphoreContender = {
  name: 'fencekit semaphore (RedisSharedLockClient)',
  blocking: true,
  open: ([endpoint], permits) => openFencekitSemaphore(endpoint as string, permits),
};

const redisSemaphore: SemaphoreContender = {
  name: 'redis-semaphore 5.8.0 (Semaphore)',
  blocking: true,
  open: ([endpoint], permits) => openRedisSemaphore(endpoint as string, permits),
};

export const semaphoreContenders: readonly SemaphoreContender[] = [
  { name: mutexFloor.name, blocking: false, open: (endpoints) => mutexFloor.open(endpoints) },
  semaphoreFloor,
  handoffFloor,
  fencekitSemaphore,
  redisSemaphore,
];
