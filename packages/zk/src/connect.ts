import { InvalidArgumentError } from '@fencekit/core';
import { ZkSession } from './checked-session.js';
import { parseServers } from './servers.js';
import { DEFAULT_FOLLOWER_LAG_MS } from './session.js';

/**
 * Default ZooKeeper session timeout: how long a dead holder keeps its locks. It must exceed the
 * follower lag (default 10 s, `DEFAULT_FOLLOWER_LAG_MS`) for a lease to have any validity; 30 s
 * leaves about 19 s per answered request, and ZooKeeper's sample configuration (tickTime 2000,
 * maxSessionTimeout 20 ticks = 40 s) grants it as asked.
 */
export const DEFAULT_SESSION_TIMEOUT_MS = 30_000;

export interface ZkServerOptions {
  /** The ensemble: `"host:port,host:port"` or a list of `"host:port"`. */
  servers: string | readonly string[];
  /**
   * Requested session timeout (the server clamps it to its min/max, by default 2–20 ticks). A holder
   * that dies keeps its locks and leadership this long. Default 30 000 ms. Must exceed
   * `followerLagMs` by 2 % (InvalidArgumentError otherwise), and the negotiated timeout too.
   */
  sessionTimeoutMs?: number;
  /**
   * Set to `syncLimit × tickTime` of your ensemble: how long a follower cut off from its leader may
   * still answer. Validity after each answered request is the session timeout less this (and a 2 %
   * clock-rate margin). Default 10 000 ms (zoo_sample.cfg: tickTime 2000 × syncLimit 5).
   */
  followerLagMs?: number;
  /** Folder under which fencekit keeps its nodes. Default `/fencekit`. */
  root?: string;
}

export interface ZkSharedSessionOptions {
  /** Share one session between a lock client and an election client; the caller closes it. */
  session: ZkSession;
  root?: string;
}

export type ConnectOptions = ZkServerOptions | ZkSharedSessionOptions;

/** Opens (or adopts) the session a client works on, validating the options. */
export function openSession(options: ConnectOptions): { session: ZkSession; owned: boolean; root: string } {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with servers or session');
  }
  const root = options.root ?? '/fencekit';
  if (typeof root !== 'string' || !/^\/[^/]/.test(root) || root.endsWith('/')) {
    throw new InvalidArgumentError(
      'root',
      root,
      'an absolute znode path like "/fencekit", without trailing slash',
    );
  }
  if ('session' in options) {
    if (!isZkSession(options.session)) {
      throw new InvalidArgumentError('session', options.session, 'a ZkSession');
    }
    return { session: options.session, owned: false, root };
  }
  return { session: createSession(options), owned: true, root };
}

/**
 * Whether `value` is a ZkSession, told by its shape rather than `instanceof`, so a session made by
 * another copy of this package (a nested or bundled install) is taken as the session it is.
 */
export function isZkSession(value: unknown): value is ZkSession {
  if (typeof value !== 'object' || value === null) return false;
  const session = value as Record<string, unknown>;
  return (
    typeof session.ready === 'function' &&
    typeof session.createWithStat === 'function' &&
    typeof session.children === 'function' &&
    typeof session.aliveUntil === 'function' &&
    typeof session.on === 'function' &&
    typeof session.close === 'function' &&
    typeof session.sessionTimeoutMs === 'number' &&
    typeof session.followerLagMs === 'number'
  );
}

/** A ZooKeeper session to share between a `ZkLockClient` and a `ZkElectionClient`. */
export function createSession(options: Omit<ZkServerOptions, 'root'>): ZkSession {
  // Checked again by ZkSession; here first, so that a list is refused as the list the caller gave.
  const servers = parseServers(options.servers);
  const sessionTimeoutMs = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
  if (typeof sessionTimeoutMs !== 'number' || !Number.isFinite(sessionTimeoutMs) || sessionTimeoutMs < 100) {
    throw new InvalidArgumentError(
      'sessionTimeoutMs',
      sessionTimeoutMs,
      'a finite number of milliseconds ≥ 100',
    );
  }
  return new ZkSession({
    servers,
    sessionTimeoutMs,
    followerLagMs: options.followerLagMs ?? DEFAULT_FOLLOWER_LAG_MS,
  });
}
