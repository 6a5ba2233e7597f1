import { InvalidArgumentError } from '@fencekit/core';
import type { RedisOptions } from 'ioredis';

/**
 * Where a connection fencekit opens goes, read from what the caller gave: a URL string, a WHATWG
 * `URL` object, `{ url, ...options }` (node-redis' shape), or ioredis options that name the server.
 *
 * ioredis takes any object for options and fills what is missing with localhost:6379. A `URL`
 * object has its fields as prototype getters, so spread into options it copies nothing; `{ url }`
 * is no ioredis option; a `Map` spreads to `{}`. Each silently became a connection to
 * localhost:6379, where a Redis could be running: two clients configured for the same server then
 * locked on different servers and both held the lock. So an object must say where to connect
 * (`host`, `port`, `path`, `sentinels` or `url`), and `URL` objects are read as the URL they are.
 * (`RedisLockClient` always needs a connection; there is no implicit localhost default.)
 */
export interface ConnectionTarget {
  /** The redis:// URL to give ioredis first, if there is one. */
  readonly url: string | undefined;
  readonly options: RedisOptions;
}

const NAMES_SERVER = ['host', 'port', 'path', 'sentinels'] as const;

export function connectionTarget(connection: unknown, argument: string, accepted: string): ConnectionTarget {
  if (typeof connection === 'string') return { url: connection, options: {} };
  if (typeof connection !== 'object' || connection === null || Array.isArray(connection)) {
    throw new InvalidArgumentError(argument, connection, accepted);
  }
  if (isUrlObject(connection)) return { url: redisUrl(connection, argument, accepted), options: {} };
  const { url, ...options } = { ...connection } as RedisOptions & { url?: unknown };
  if (url !== undefined) {
    if (typeof url === 'string') return { url, options };
    if (isUrlObject(url)) return { url: redisUrl(url, argument, accepted), options };
    throw new InvalidArgumentError(
      `${argument}.url`,
      url,
      'a redis:// or rediss:// URL (string or URL object)',
    );
  }
  if (!NAMES_SERVER.some((key) => options[key] !== undefined)) {
    throw new InvalidArgumentError(
      argument,
      connection,
      `${accepted}; options must name the server (host, port, path, sentinels or url): ioredis would take localhost:6379`,
    );
  }
  return { url: undefined, options };
}

/**
 * A startup node of a Redis Cluster: `URL` objects as their string (ioredis would read one as
 * options with no host or port: 127.0.0.1:6379), anything else as given.
 */
export function clusterStartupNode(node: unknown, index: number): unknown {
  if (!isUrlObject(node)) return node;
  return redisUrl(node, `connection.cluster[${index}]`, 'a redis:// URL, "host:port" or { host, port }');
}

/** A WHATWG URL (of this realm or another), told by its tag and `href` rather than `instanceof`. */
function isUrlObject(value: unknown): value is URL {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.prototype.toString.call(value) === '[object URL]' &&
    typeof (value as { href?: unknown }).href === 'string'
  );
}

function redisUrl(url: URL, argument: string, accepted: string): string {
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new InvalidArgumentError(argument, url, `${accepted} (a URL object with redis: or rediss:)`);
  }
  return url.href;
}
