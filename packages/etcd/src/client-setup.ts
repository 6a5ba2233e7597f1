import { ClientClosedError, InvalidArgumentError } from '@fencekit/core';
import type { EtcdClientOptions } from './client.js';
import { type Connection, closeNow, connect } from './connection.js';
import { SessionPool } from './session-pool.js';
import type { QueueContext } from './wait.js';

/**
 * What `EtcdClient` and `EtcdSharedLockClient` both open from their options: the connection and the
 * queue context (prefix, session pools, the client's closing signal and its work tracker). One place, so
 * the two clients cannot drift apart in how they check options or keep sessions.
 */
export interface OpenedClient {
  connection: Connection;
  context: QueueContext;
  keepAlive: boolean;
}

export function openClient(
  options: EtcdClientOptions,
  closing: AbortSignal,
  track: QueueContext['track'],
): OpenedClient {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with hosts or client');
  }
  const prefix = options.prefix ?? 'fencekit';
  if (typeof prefix !== 'string' || prefix.length === 0) {
    throw new InvalidArgumentError('prefix', prefix, 'a non-empty string');
  }
  if (options.keepAlive !== undefined && typeof options.keepAlive !== 'boolean') {
    throw new InvalidArgumentError('keepAlive', options.keepAlive, 'a boolean');
  }
  const connection = connect(options);
  const etcd = connection.etcd;
  const keepAlive = options.keepAlive ?? true;
  const shared = new SessionPool(etcd, connection.callTimeoutMs, 'shared');
  const context: QueueContext = {
    etcd,
    callTimeoutMs: connection.callTimeoutMs,
    prefix,
    sessions: keepAlive ? shared : new SessionPool(etcd, connection.callTimeoutMs, 'per-grant'),
    campaignSessions: shared,
    closing,
    track,
  };
  return { connection, context, keepAlive };
}

/** Keeps `work` in `inflight` until it settles, and returns it. */
export function trackIn<T>(inflight: Set<Promise<unknown>>, work: Promise<T>): Promise<T> {
  inflight.add(work);
  const forget = () => inflight.delete(work);
  work.then(forget, forget);
  return work;
}

/**
 * Closes an opened client: aborts its work, waits for work in flight (a join, a read; background
 * retries stop at once, waiters give up their place without a request) so that no session is granted
 * after the pools are closed, then revokes the sessions: every key lives on one of them, so one revoke
 * each deletes them all and close() sends no release, resignation or withdrawal of its own.
 */
export async function closeOpened(
  opened: Pick<OpenedClient, 'connection' | 'context'>,
  closing: AbortController,
  inflight: Set<Promise<unknown>>,
  name: string,
): Promise<void> {
  closing.abort(new ClientClosedError(name));
  await Promise.allSettled([...inflight]);
  await Promise.allSettled([opened.context.sessions.close(), opened.context.campaignSessions.close()]);
  if (opened.connection.owned) await closeNow(opened.connection);
}
