import type { Redis } from 'ioredis';

interface Follower {
  stop(): void;
}

const followers = new WeakMap<Redis, Follower>();

/**
 * Makes a connection found through Sentinel, which fencekit opened, connect again when ioredis ends it
 * unasked. ioredis' `failoverDetector` closes the connector when a Sentinel announces `+switch-master`; if the
 * connection is reconnecting at that moment (its primary was killed), the Sentinel lookup in flight fails with
 * "Connection is closed." and ioredis gives up for good (status 'end', no retry), so every later command fails
 * at once even after the deployment heals (#17). The delays are the connection's own `retryStrategy`'s; a
 * strategy that returns no number asked for no reconnection and is obeyed. `stopReconnecting` (called by
 * `closeConnection` before anything is closed) ends it, timer included.
 */
export function reconnectAfterSentinelEnd(redis: Redis): void {
  if (redis.options.sentinels === undefined || redis.options.sentinels === null) return;
  if (followers.has(redis)) return;
  let attempts = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const onReady = (): void => {
    attempts = 0;
  };
  const onEnd = (): void => {
    if (stopped || timer !== undefined) return;
    const strategy = redis.options.retryStrategy;
    attempts += 1;
    const delay = typeof strategy === 'function' ? strategy(attempts) : null;
    if (typeof delay !== 'number') return;
    timer = setTimeout(() => {
      timer = undefined;
      // 'end' is emitted on the next tick: a close() begun since then has already stopped this.
      if (!stopped && redis.status === 'end') redis.connect().catch(() => undefined);
    }, delay);
    // A client its owner forgot to close is not kept alive by this timer alone.
    timer.unref();
  };
  redis.on('ready', onReady);
  redis.on('end', onEnd);
  followers.set(redis, {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      redis.off('ready', onReady);
      redis.off('end', onEnd);
      followers.delete(redis);
    },
  });
}

/** Stops what `reconnectAfterSentinelEnd` started on `redis` (nothing if it started nothing). */
export function stopReconnecting(redis: Redis): void {
  followers.get(redis)?.stop();
}
