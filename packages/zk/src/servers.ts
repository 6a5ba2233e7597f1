import { InvalidArgumentError } from '@fencekit/core';

/**
 * What a ZooKeeper connection string may be: `host:port` entries, comma-separated (or given as a
 * list), then an optional chroot path. Checked wholly here, because node-zookeeper-client checks
 * almost nothing: it splits entries on `:` and dials what it gets. A port outside 1–65535 makes
 * `net.connect` throw from inside its timer (an uncaught exception: the process dies), a
 * `user:password@host` entry is dialled as a host name and its password printed, and an entry such
 * as `zk://…` puts the rest into the chroot, where its own `assert` throws a raw AssertionError.
 * ZooKeeper takes credentials only through `addAuthInfo`, never in the connection string.
 */
const ENTRY = /^([A-Za-z0-9][A-Za-z0-9._-]*):(\d{1,5})$/;

const EXPECTED =
  'host:port entries (port 1-65535), comma-separated or as a list, then an optional /chroot; ' +
  'no scheme and no user info (ZooKeeper takes credentials through addAuthInfo)';

/** The connection string `servers` stands for, or InvalidArgumentError (showing it redacted). */
export function parseServers(servers: unknown): string {
  const joined = joinServers(servers);
  if (joined === undefined || !isConnectionString(joined)) {
    throw new InvalidArgumentError('servers', servers, EXPECTED);
  }
  return joined;
}

function joinServers(servers: unknown): string | undefined {
  if (typeof servers === 'string') return servers;
  if (!Array.isArray(servers) || servers.length === 0) return undefined;
  if (!servers.every((entry) => typeof entry === 'string')) return undefined;
  return servers.join(',');
}

function isConnectionString(servers: string): boolean {
  const slash = servers.indexOf('/');
  const hosts = slash >= 0 ? servers.slice(0, slash) : servers;
  const chroot = slash >= 0 ? servers.slice(slash) : '/';
  const entries = hosts.split(',');
  return entries.every(isEntry) && isChroot(chroot);
}

function isEntry(entry: string): boolean {
  const match = ENTRY.exec(entry);
  if (match === null) return false;
  const port = Number(match[2]);
  return port >= 1 && port <= 65_535;
}

/** A chroot node-zookeeper-client's `Path.validate` accepts, without controls or lone surrogates. */
function isChroot(chroot: string): boolean {
  if (chroot === '/') return true;
  if (chroot.endsWith('/') || /[\p{Cc}\p{Cs}\s]/u.test(chroot)) return false;
  return chroot
    .slice(1)
    .split('/')
    .every((name) => name !== '' && name !== '.' && name !== '..');
}
