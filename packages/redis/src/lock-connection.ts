import { DEFAULT_COMMAND_TIMEOUT_MS } from './connection.js';
import { trackConnectionState } from './connection-state.js';
import {
  closeClient,
  duplicateClient,
  hasCommandTimeout,
  type OpenedClient,
  openClient,
  type RedisDeployment,
} from './deployment.js';
import { resourceWakeChannel, wakeChannel } from './keys.js';
import { newOwnerToken } from './owner.js';
import { CommandDeadlines } from './script-call.js';
import { WakeSubscriber } from './wake.js';

/**
 * What every Redis lock client (the mutex's and the shared locks') opens: the command connection, the
 * deadline timer its commands share, the following of its state, and the wake-up subscriber.
 */
export interface LockConnection {
  readonly connection: OpenedClient;
  /** Set when the connection has no per-command timer of ioredis' own. */
  readonly deadlines: CommandDeadlines | undefined;
  readonly wake: WakeSubscriber;
  /** Stops following the connection's state (see `connection-state.ts`). */
  readonly untrack: () => void;
}

/**
 * Opens a lock client's connections, its wake-up channels under `prefix`. `waiterTtlMs` (three heartbeats) is
 * how long a Cluster subscriber's SSUBSCRIBE may go unanswered before it is replaced (see `WakeSubscriber`):
 * its waiters poll at their heartbeat meanwhile, and a healthy subscriber answers in milliseconds.
 */
export function openLockConnection(
  deployment: RedisDeployment,
  prefix: string,
  waiterTtlMs: number,
): LockConnection {
  // A connection without ioredis' per-command timer (fencekit's own, unless the options ask for one,
  // or a caller's instance made without it) gets one deadline timer shared by its lock commands
  // instead: no lock command waits for an answer forever.
  const connection = openClient(deployment, { commandTimeout: undefined });
  const redis = connection.redis;
  const bounded = hasCommandTimeout(redis);
  const deadlines = bounded ? undefined : new CommandDeadlines(DEFAULT_COMMAND_TIMEOUT_MS);
  const untrack = trackConnectionState(redis);
  // The subscriber keeps ioredis' own timeout: it sends a SUBSCRIBE now and then, nothing more.
  const subscriberOptions = bounded ? {} : { commandTimeout: DEFAULT_COMMAND_TIMEOUT_MS };
  const clientId = newOwnerToken();
  const wake = new WakeSubscriber(
    wakeChannel(prefix, clientId),
    () => duplicateClient(redis, subscriberOptions),
    // Redis Cluster: sharded channels, one per resource waited on (see WakeSubscriber).
    connection.cluster ? (resource) => resourceWakeChannel(prefix, resource, clientId) : undefined,
    waiterTtlMs,
    // A replacement for a stuck subscriber starts from the nodes the command connection knows.
    () => duplicateClient(redis, subscriberOptions, true),
  );
  return { connection, deadlines, wake, untrack };
}

/** Frees what `openLockConnection` opened; a caller's own instance is left open. */
export async function closeLockConnection(opened: LockConnection): Promise<void> {
  opened.untrack();
  // Side by side: each is bounded by QUIT_TIMEOUT_MS, so close() pays that bound once.
  await Promise.all([
    opened.wake.close(),
    opened.connection.owned ? closeClient(opened.connection.redis) : undefined,
  ]);
  opened.deadlines?.close();
}
