import { createRequire } from 'node:module';

/**
 * When the request that was granted left the client, as the history needs it for the lease check's
 * `validity-past-send` rule (@fencekit/checker README, "Lease histories"): Redis and Redlock servers
 * count a grant's TTL from receiving its request, so a correct lease's `validUntil` never exceeds that
 * request's send plus the TTL, and one counted from the answer (or from a reading after a stop) does.
 *
 * The adapter knows its own send time, but the check must not take a possibly broken adapter's word for
 * it, so this is observed from outside: ioredis' `sendCommand`, where every command is handed to the
 * client library, records the history clock against each string argument, and a grant looks up its
 * lease's `owner`. Every lock request carries the owner token (the key's value is the owner), and a
 * correct adapter reads its clock before handing over a request carrying it (the contract counts
 * validity "from when the request was sent"), so the last such hand-over before the grant is returned is
 * never earlier than the instant the adapter counts from, on the same monotonic clock (`performance.now()`
 * and `process.hrtime` are both CLOCK_MONOTONIC). A later send (a re-sent or queued request, a Redlock
 * round to five nodes, a heartbeat of a waiter handed the lock) only moves it later: fewer convictions,
 * never a false one. A token never seen, or forgotten, gives no `sentAt`, and the rule then judges
 * nothing for that grant.
 */
export interface SendClock {
  /** ns on the history clock of the last hand-over of a command naming `token`; forgets it. */
  take(token: string): bigint | undefined;
}

/** Tokens remembered at most (oldest forgotten first): polling clients leave one per refused attempt. */
const MAX_TOKENS = 4_096;
/** Owner tokens are UUIDs; shorter strings (numbers, TTLs, short keys) are not worth a map entry. */
const MIN_TOKEN_LENGTH = 16;
const MAX_TOKEN_LENGTH = 128;

const TAPPED = Symbol.for('fencekit.harness.sendClock');

interface CommandLike {
  args?: unknown;
}
interface RedisPrototype {
  sendCommand(this: unknown, command: CommandLike, ...rest: unknown[]): unknown;
  [TAPPED]?: Map<string, bigint>;
}

/**
 * Taps `sendCommand` on the Redis class of the ioredis that `adapter` itself resolves (the copy its
 * connections are built from; a Cluster hands each command to one of those), once per process.
 */
export function ioredisSendClock(adapter: '@fencekit/redis' | '@fencekit/redlock'): SendClock {
  const require = createRequire(import.meta.resolve(adapter));
  const ioredis = require('ioredis') as { Redis?: { prototype: RedisPrototype } };
  const proto = ioredis.Redis?.prototype;
  if (proto === undefined || typeof proto.sendCommand !== 'function') {
    throw new Error(`${adapter}'s ioredis has no Redis.prototype.sendCommand to observe sends on`);
  }
  let sends = proto[TAPPED];
  if (sends === undefined) {
    const seen = new Map<string, bigint>();
    sends = seen;
    const original = proto.sendCommand;
    proto.sendCommand = function tapped(this: unknown, command: CommandLike, ...rest: unknown[]) {
      // Read before the hand-over, after the adapter's own clock reading (program order).
      const at = process.hrtime.bigint();
      const args = command?.args;
      if (Array.isArray(args)) {
        for (const arg of args) {
          if (typeof arg !== 'string' || arg.length < MIN_TOKEN_LENGTH || arg.length > MAX_TOKEN_LENGTH)
            continue;
          // Re-inserted so that the map's order is the order of last sends, oldest first.
          seen.delete(arg);
          seen.set(arg, at);
        }
        while (seen.size > MAX_TOKENS) seen.delete(seen.keys().next().value as string);
      }
      return original.call(this, command, ...rest);
    };
    proto[TAPPED] = seen;
  }
  const tapped = sends;
  return {
    take(token) {
      const at = tapped.get(token);
      tapped.delete(token);
      return at;
    },
  };
}
