import { InvalidArgumentError } from '@fencekit/core';

/**
 * Where a resource's state lives. Every key of one resource shares the hash tag `{resource}`, so the
 * scripts touch a single slot (Redis Cluster) and the keys sit under a prefix of their own, away
 * from the application's keys.
 *
 * The suffixes are fixed words without `}:`, so `prefix{resource}:suffix` splits back into one
 * (resource, suffix) pair only: two resources never share a key, whatever characters they contain.
 */
export interface ResourceKeys {
  /** The grant: a string holding the holder's owner token, with the lease's TTL. */
  readonly lock: string;
  /** The fencing counter: INCR'd on every grant, never expires, never deleted. */
  readonly fence: string;
  /** Waiters in arrival order: a sorted set of owner tokens scored by ticket. */
  readonly queue: string;
  /** Each waiter's liveness deadline, handoff and wake channel: a hash owner → "deadlineMs|handoff|channel" (see the scripts). */
  readonly waiters: string;
  /** The last ticket handed out for this resource's queue. */
  readonly tickets: string;
  /**
   * Epoch fences only (`fence: 'epoch'`): "epoch|reign" of the last grant, never expires (see the
   * scripts' `epoch_fence`).
   */
  readonly epoch: string;
}

export const DEFAULT_KEY_PREFIX = 'fencekit:';

/**
 * Redis Cluster hashes a key by the text between its first `{` and the first `}` after it, unless
 * that text is empty; then by the whole key. A resource name starting with `}` thus leaves its keys
 * (`prefix{}x}:lock`, `prefix{}x}:fence`…) without a tag, in different slots, and every script on
 * them fails with CROSSSLOT. Such names are refused on a Cluster (they never worked there). On one
 * node they keep working with the keys they always had: no hash tag is needed there, and any other
 * key layout for them would strand the fence counters and queues already stored under the old keys.
 */
export function assertClusterResource(resource: string): void {
  if (resource.startsWith('}')) {
    throw new InvalidArgumentError(
      'resource',
      resource,
      'on Redis Cluster, a name not starting with "}" (its keys would have no hash tag and fall in different slots)',
    );
  }
}

export function resourceKeys(prefix: string, resource: string): ResourceKeys {
  const base = `${prefix}{${resource}}:`;
  return {
    lock: `${base}lock`,
    fence: `${base}fence`,
    queue: `${base}queue`,
    waiters: `${base}waiters`,
    tickets: `${base}tickets`,
    epoch: `${base}epoch`,
  };
}

/** The pub/sub channel one client's waiters are woken on. */
export function wakeChannel(prefix: string, clientId: string): string {
  return `${prefix}wake:${clientId}`;
}

/**
 * The sharded pub/sub channel (Redis Cluster) one client's waiters on `resource` are woken on: it
 * carries the resource's hash tag, so SPUBLISH in the release script reaches the node that owns the
 * slot. The scripts tell it from a client channel by its start, the resource's key base.
 */
export function resourceWakeChannel(prefix: string, resource: string, clientId: string): string {
  return `${prefix}{${resource}}:wake:${clientId}`;
}

/** The keys in the order the scripts expect them (KEYS[1..5]). */
export function keyList(keys: ResourceKeys): [string, string, string, string, string] {
  return [keys.lock, keys.fence, keys.queue, keys.waiters, keys.tickets];
}
