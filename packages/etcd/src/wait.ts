import { isFencekitError, LockAbortedError, LockTimeoutError } from '@fencekit/core';
import type { Etcd3 } from 'etcd3';
import { anySignal, deadlineSignal, untilAborted } from './abort.js';
import { waiterKey } from './keys.js';
import {
  awaitDeletion,
  join,
  locate,
  type Position,
  SessionGoneError,
  type Ticket,
  toBackendError,
  withdraw,
} from './queue.js';
import type { Session } from './session.js';
import type { SessionPool } from './session-pool.js';

/** Everything a queue user (lock, election) needs from the client that owns it. */
export interface QueueContext {
  readonly etcd: Etcd3;
  readonly prefix: string;
  /** Sessions for locks (kept alive or not, as the client was configured). */
  readonly sessions: SessionPool;
  /** Sessions for campaigns: always kept alive (a leadership has no extend). */
  readonly campaignSessions: SessionPool;
  /** Aborted with `ClientClosedError` when the client closes. */
  readonly closing: AbortSignal;
  /** Runs `work` so that `close()` waits for it. */
  track<T>(work: Promise<T>): Promise<T>;
}

export interface WaitOptions {
  kind: 'lock' | 'campaign';
  queue: string;
  /** Name used in errors: the resource or election. */
  name: string;
  ttlMs: number;
  waitMs: number;
  signal: AbortSignal | undefined;
  /** The value stored in the waiter key (owner token, or the candidate for elections). */
  value: (session: Session) => string;
  /** false: one attempt, give the place up if someone is ahead (tryAcquire). */
  wait: boolean;
}

/** A waiter at the head of its queue, with the session its key is attached to. */
export interface Granted {
  session: Session;
  ticket: Ticket;
  checkIn: () => void;
}

/** A session can die while its waiter waits; the waiter then rejoins with a new one, this many times. */
const MAX_SESSION_ROUNDS = 5;

/**
 * Waits in `options.queue` until at the head: joins (one Txn), then watches only its predecessor and
 * re-reads its position after each deletion. On timeout, abort or close it withdraws its key before
 * rejecting, so nothing is left queued or granted behind the caller.
 */
export async function waitForHead(context: QueueContext, options: WaitOptions): Promise<Granted | null> {
  if (context.closing.aborted) throw context.closing.reason;
  const deadline = deadlineSignal(options.waitMs, () => new LockTimeoutError(options.name, options.waitMs));
  const stop = anySignal([options.signal, deadline.signal, context.closing]);
  try {
    for (let round = 0; round < MAX_SESSION_ROUNDS; round++) {
      const pool = options.kind === 'campaign' ? context.campaignSessions : context.sessions;
      const checkingOut = pool.checkOut(options.ttlMs, options.queue);
      const { session, checkIn } = await untilAborted(checkingOut, stop.signal).catch((error: unknown) => {
        // Given up before the session came: hand the reservation back once it does.
        checkingOut.then(
          (late) => late.checkIn(),
          () => {},
        );
        throw error;
      });
      const key = waiterKey(options.queue, session.idHex);
      let ticket: Ticket | undefined;
      const waiting = anySignal([stop.signal, session.signal]);
      try {
        const joined = await join(
          context.etcd,
          options.queue,
          key,
          session.id,
          options.value(session),
          options.name,
        );
        ticket = joined.ticket;
        let position: Position = joined.position;
        while (position.kind === 'behind') {
          if (!options.wait) {
            await withdraw(context.etcd, ticket);
            checkIn();
            return null;
          }
          await awaitDeletion(context.etcd, position.predecessor, position.asOf, waiting.signal);
          position = await locate(context.etcd, ticket);
        }
        // Granted, but a caller who gave up meanwhile must not be left holding: give it back.
        if (options.signal?.aborted) throw options.signal.reason;
        if (context.closing.aborted) throw context.closing.reason;
        if (position.kind === 'gone') throw new SessionGoneError();
        return { session, ticket, checkIn };
      } catch (error) {
        if (ticket) await withdraw(context.etcd, ticket).catch(() => false);
        checkIn();
        // The key vanished (session expired, or someone deleted it): rejoin at the back, in time.
        const rejoin = session.signal.aborted || error instanceof SessionGoneError;
        if (rejoin && !stop.signal.aborted) continue;
        throw error;
      } finally {
        waiting.dispose();
      }
    }
    throw toBackendError(
      'waiting',
      new Error(`etcd sessions kept expiring (${MAX_SESSION_ROUNDS} in a row)`),
    );
  } catch (error) {
    throw translate(error, options, context);
  } finally {
    deadline.clear();
    stop.dispose();
  }
}

function translate(error: unknown, options: WaitOptions, context: QueueContext): Error {
  if (options.signal?.aborted) return new LockAbortedError(options.name, { cause: options.signal.reason });
  if (context.closing.aborted) return context.closing.reason as Error;
  if (isFencekitError(error)) return error;
  return toBackendError('waiting', error);
}
