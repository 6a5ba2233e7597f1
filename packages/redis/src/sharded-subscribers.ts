import type { EventEmitter } from 'node:events';
import type { Cluster, Redis } from 'ioredis';

/**
 * What a Cluster with `shardedSubscribers: true` (the Redis Cluster wake-up subscriber) leaves running after
 * its quit()/disconnect(), in ioredis 5.9, and the only place fencekit reaches into ioredis' private fields to
 * end it (test/sharded-subscribers.test.ts fails when their shape changes):
 * - each sharded subscriber is a Redis of its own, made with none of our options; ioredis' disconnect()
 *   half-closes its socket and destroys it 2 s later, and subscribers dropped by a slot refresh (a failover)
 *   are disconnected the same way, out of our reach unless seen when made;
 * - a subscriber that failed to connect schedules a slot refresh after a back-off (up to 2 s) with a timer
 *   nothing can clear: here it is scheduled by a timer of ours instead, cleared by `sweep`.
 * Without these internals (another ioredis) `watch` does nothing and `sweep` only waits for the refresh.
 */
interface ShardedSubscriberInternals {
  getInstance(): Redis | null;
}
interface ClusterInternals {
  shardedSubscribers?: { shardedSubscribers?: unknown };
  subscriberGroupEmitter?: unknown;
}
interface Watch {
  readonly instances: Set<Redis>;
  readonly timers: Set<NodeJS.Timeout>;
  readonly group: Map<string, ShardedSubscriberInternals>;
  closed: boolean;
}

const watches = new WeakMap<Cluster, Watch>();

/** The private pieces `watch` uses, or undefined when this ioredis does not have them. */
export function shardedSubscriberInternals(
  cluster: Cluster,
): { group: Map<string, ShardedSubscriberInternals>; emitter: EventEmitter } | undefined {
  const internals = cluster as unknown as ClusterInternals;
  const group = internals.shardedSubscribers?.shardedSubscribers;
  const emitter = internals.subscriberGroupEmitter as EventEmitter | undefined;
  if (!(group instanceof Map) || typeof emitter?.listeners !== 'function') return undefined;
  return { group: group as Map<string, ShardedSubscriberInternals>, emitter };
}

/** Follows `cluster`'s sharded subscribers from now on, so that `sweep` can end what they leave. Call it at once. */
export function watchShardedSubscribers(cluster: Cluster): void {
  const internals = shardedSubscriberInternals(cluster);
  if (internals === undefined || watches.has(cluster)) return;
  const { group, emitter } = internals;
  const watch: Watch = { instances: new Set(), timers: new Set(), group, closed: false };
  watches.set(cluster, watch);
  // ioredis emits '+subscriber' on the Cluster right after it made one (and started connecting it).
  cluster.on('+subscriber', () => collect(watch));
  const retries = emitter.listeners('subscriberConnectFailed');
  if (retries.length !== 1) return;
  const [retry] = retries as [(event: { delay: number; error: unknown }) => void];
  emitter.removeListener('subscriberConnectFailed', retry);
  emitter.on('subscriberConnectFailed', (event: { delay: number; error: unknown }) => {
    if (watch.closed) return;
    const timer = setTimeout(() => {
      watch.timers.delete(timer);
      // ioredis' own handler, with no back-off left: it reports the error and refreshes the slots.
      if (!watch.closed) retry.call(emitter, { ...event, delay: 0 });
    }, event.delay);
    watch.timers.add(timer);
  });
}

/** Remembers the subscribers the group has now, forgetting those that ended with nothing left pending. */
function collect(watch: Watch): void {
  for (const instance of watch.instances) if (settled(instance)) watch.instances.delete(instance);
  for (const subscriber of watch.group.values()) {
    const instance = subscriber.getInstance();
    if (instance !== null) watch.instances.add(instance);
  }
}

/**
 * Before the Cluster's quit(): remembers the subscribers it has now (its disconnect() forgets them). Then
 * `finish` after its disconnect(): clears the refresh timers, destroys every subscriber's socket (which
 * clears ioredis' 2 s timer), and waits (bounded) for a slot refresh still in flight to see the Cluster closed.
 */
export function sweepShardedSubscribers(cluster: Cluster): { finish(boundMs: number): Promise<void> } {
  const watch = watches.get(cluster);
  if (watch !== undefined) collect(watch);
  return {
    async finish(boundMs) {
      if (watch !== undefined) {
        watch.closed = true;
        for (const timer of watch.timers) clearTimeout(timer);
        watch.timers.clear();
        for (const instance of watch.instances) {
          instance.disconnect();
          end(instance);
        }
        watch.instances.clear();
      }
      // Public API: with a refresh in flight the callback waits for it (it stops at its next answer, the
      // Cluster being closed); with none, the emptied pool ends it at once.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve())),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, boundMs);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}

/** Ended, and no 2 s timer of ioredis' disconnect() waits on its socket. */
function settled(instance: Redis): boolean {
  const stream = instance.stream as Redis['stream'] | undefined;
  return instance.status === 'end' && (stream === undefined || stream.listenerCount('close') === 0);
}

/**
 * Destroys the subscriber's socket, which clears the timer ioredis' disconnect() set on it. A socket that
 * had already closed (a node that refused the connection) when ioredis disconnected it will not close
 * again, and that timer waits on its 'close' event: it is emitted once more here, for those listeners.
 */
function end(instance: Redis): void {
  const stream = instance.stream as Redis['stream'] | undefined;
  if (stream === undefined) return;
  if (!stream.destroyed) stream.destroy();
  else if (stream.listenerCount('close') > 0) stream.emit('close', false);
}
