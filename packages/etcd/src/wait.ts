import {
  Backoff,
  isFencekitError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  monotonicNow,
} from '@fencekit/core';
import type { Etcd3, IKeyValue, IRequestOp } from 'etcd3';
import { anySignal, deadlineSignal, untilAborted } from './abort.js';
import { toBackendError } from './errors.js';
import { joinMarkKey, waiterKey } from './keys.js';
import {
  clearUnansweredJoin,
  type EtcdCalls,
  type JoinMark,
  join,
  type Position,
  SessionGoneError,
  type Ticket,
  UnansweredJoin,
  withdraw,
} from './queue.js';
import type { Session } from './session.js';
import { SessionLapsedError, type SessionPool } from './session-pool.js';
import { awaitTurn } from './turn.js';
import { withdrawInBackground } from './withdrawal.js';

/** Everything a queue user (lock, election) needs from the client that owns it. */
export interface QueueContext extends EtcdCalls {
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
  /**
   * When the caller asked (`monotonicNow()`; default: now): `waitMs` counts from it, so a caller that
   * queues again within one wait passes its own `waitMs`, which its `LockTimeoutError` reports.
   */
  startedAt?: number | undefined;
  signal: AbortSignal | undefined;
  /** The value stored in the waiter key (owner token, or the candidate for elections). */
  value: (session: Session) => string;
  /** false: one attempt, give the place up if someone is ahead (tryAcquire). */
  wait: boolean;
  /**
   * Who may go, when not the mutex's rule (the head of the queue alone): the permit queue's (see
   * `permit-queue.ts`). Without it the waiter waits for the head as a lock does.
   */
  turn?: TurnRule | undefined;
}

/** A rule other than "the head goes" (see `WaitOptions.turn`). */
export interface TurnRule {
  /** What the join's Txn reads after the put when the queue was not empty (`join`'s `read`). */
  readonly read: IRequestOp;
  /**
   * From what the join read (`undefined`: the queue was empty): 'go' once the ticket may go, 'gone'
   * when its key vanished, 'busy' when it may not go now and `stop` is undefined (a try). Waits
   * otherwise, rejecting with `stop`'s reason when it aborts.
   */
  wait(
    ticket: Ticket,
    seen: IKeyValue[] | undefined,
    stop: (() => AbortSignal) | undefined,
  ): Promise<TurnVerdict>;
}

export type TurnVerdict = 'go' | 'gone' | 'busy';

/** A waiter at the head of its queue, with the session its key is attached to. */
export interface Granted {
  session: Session;
  ticket: Ticket;
  checkIn: () => void;
}

/**
 * After a grant that lapsed on its way back (a session TTL of tens of ms on a busy event loop): backs
 * off with core's backoff, then says whether to queue again — false once the wait (`deadline`, a
 * `monotonicNow()` instant) has run out. Not an outage (etcd answered), so it is retried as long as
 * the caller waits. An abort or close cuts the back-off short and answers true: the next `waitForHead`
 * reports it as it reports any other.
 */
export async function backOffAfterLapse(
  backoff: Backoff,
  stops: readonly (AbortSignal | undefined)[],
  deadline: number,
): Promise<boolean> {
  const stop = anySignal(stops);
  try {
    return await backoff.wait(stop.signal, deadline);
  } catch {
    return true;
  } finally {
    stop.dispose();
  }
}

/**
 * A session can lapse before its waiter used it, or die while it waits; a try (`wait: false`) then
 * rejoins with a new one this many times. A waiting caller rejoins as long as its `waitMs` allows.
 */
const MAX_SESSION_ROUNDS = 5;

/** Each session's join mark, kept as long as the session object lives. */
const joinMarks = new WeakMap<Session, JoinMark>();

function joinMarkOf(prefix: string, session: Session): JoinMark {
  let mark = joinMarks.get(session);
  if (!mark) {
    mark = { key: joinMarkKey(prefix, session.idHex), revision: 0n };
    joinMarks.set(session, mark);
  }
  return mark;
}

/** One signal for "stop waiting": the caller's signal, the `waitMs` deadline, or the client closing. */
interface Stop {
  readonly signal: AbortSignal;
  clear(): void;
}

/**
 * Waits in `options.queue` until at the head: joins (one Txn), then watches only its predecessor and
 * re-reads its position after each deletion. On timeout, abort or close it withdraws its key before
 * rejecting, so nothing is left queued or granted behind the caller.
 *
 * The abort wiring (deadline timer, combined signal) is built only once the caller has to wait — for
 * a session grant, or behind another waiter. An uncontended acquire with a ready session is one Txn
 * and nothing else; the deadline still counts from the call (`startedAt`).
 */
export async function waitForHead(context: QueueContext, options: WaitOptions): Promise<Granted | null> {
  if (context.closing.aborted) throw context.closing.reason;
  const startedAt = options.startedAt ?? monotonicNow();
  let stop: Stop | undefined;
  const stopSignal = (): AbortSignal => {
    stop ??= stopFor(context, options, startedAt);
    return stop.signal;
  };
  const gaveUp = (): boolean =>
    stop?.signal.aborted === true ||
    options.signal?.aborted === true ||
    context.closing.aborted ||
    monotonicNow() - startedAt >= options.waitMs;
  // A session that lapsed (its TTL ran out on a busy event loop before it was used, or it died while
  // waiting) is not an outage: etcd answered. Back off (so the retries do not keep landing in the same
  // stalls) and rejoin with a fresh session while the wait allows; a try gets a few rounds.
  const backoff = new Backoff({ baseMs: 50, capMs: 500 });
  let lapses = 0;
  const rejoinAfterLapse = async (): Promise<boolean> => {
    lapses++;
    if (!options.wait) return lapses < MAX_SESSION_ROUNDS;
    if (gaveUp()) return false;
    return await backoff.wait(stopSignal(), startedAt + options.waitMs);
  };
  const lapsedOut = (cause: unknown): Error =>
    options.wait
      ? new LockTimeoutError(options.name, options.waitMs, { cause })
      : new LockLostError(options.name, `etcd sessions kept lapsing before use (${lapses} in a row)`, {
          cause,
        });
  try {
    // A caller who gave up before asking joins nothing.
    options.signal?.throwIfAborted();
    for (;;) {
      const pool = options.kind === 'campaign' ? context.campaignSessions : context.sessions;
      let checkedOut: { session: Session; checkIn: () => void };
      try {
        checkedOut =
          pool.checkOutNow(options.ttlMs, options.queue) ??
          (await checkOutWaiting(pool, options, stopSignal()));
      } catch (error) {
        if (!(error instanceof SessionLapsedError)) throw error;
        if (await rejoinAfterLapse()) continue;
        throw lapsedOut(error);
      }
      const { session, checkIn } = checkedOut;
      const key = waiterKey(options.queue, session.idHex);
      let ticket: Ticket | undefined;
      let waiting: { signal: AbortSignal; dispose: () => void } | undefined;
      try {
        const joined = await join(
          context,
          options.queue,
          key,
          session.id,
          options.value(session),
          options.name,
          joinMarkOf(context.prefix, session),
          options.turn?.read,
        );
        ticket = joined.ticket;
        let position: Position = joined.position;
        if (options.turn) {
          const waitingSignal = () => {
            waiting ??= anySignal([stopSignal(), session.signal]);
            return waiting.signal;
          };
          const verdict = await options.turn.wait(
            ticket,
            joined.seen,
            options.wait ? waitingSignal : undefined,
          );
          if (verdict === 'busy') {
            await withdraw(context, ticket);
            checkIn();
            return null;
          }
          position = verdict === 'go' ? { kind: 'head' } : { kind: 'gone' };
        }
        while (position.kind === 'behind') {
          if (!options.wait) {
            await withdraw(context, ticket);
            checkIn();
            return null;
          }
          waiting ??= anySignal([stopSignal(), session.signal]);
          // Woken by the watch, or by a periodic re-read (a watch through a silent member hears
          // nothing): each re-read checks in the same Txn that my key still exists (Jepsen's etcd
          // 3.4.3 finding). Not needed when join() found me at the head: that Txn created my key.
          position = await awaitTurn(context, ticket, position, waiting.signal);
        }
        // Granted, but a caller who gave up meanwhile must not be left holding: give it back.
        if (options.signal?.aborted) throw options.signal.reason;
        if (context.closing.aborted) throw context.closing.reason;
        if (position.kind === 'gone') throw new SessionGoneError();
        return { session, ticket, checkIn };
      } catch (error) {
        // The key vanished (session expired, or someone deleted it): rejoin at the back, in time. Read
        // before giving the place up: checking a per-grant session in revokes it, which is no lapse.
        const rejoin = session.signal.aborted || error instanceof SessionGoneError;
        await giveUpPlace(context, session, ticket, error, checkIn);
        if (!rejoin) throw error;
        if (await rejoinAfterLapse()) continue;
        throw lapsedOut(error);
      } finally {
        waiting?.dispose();
      }
    }
  } catch (error) {
    throw translate(error, options, context);
  } finally {
    stop?.clear();
  }
}

/**
 * Takes a waiter's key out of the queue when it stops waiting (timeout, abort, error), then checks
 * its session in. If etcd does not answer (an outage), the key would stay — on a session kept alive,
 * for good, and once at the head it would hold the lock for nobody — so it is withdrawn in the
 * background, and the session stays reserved for this queue until then: no later waiter of this
 * client reuses the key's name meanwhile, which is what lets the clean-up of an unanswered join
 * delete the key whatever its revision.
 */
async function giveUpPlace(
  context: QueueContext,
  session: Session,
  ticket: Ticket | undefined,
  error: unknown,
  checkIn: () => void,
): Promise<void> {
  // A closing client revokes its sessions next, and a session that ended is revoked by its pool (with
  // retries): either way this key goes with its session, and no request here holds up a rejoin. Ended,
  // not merely past its validity by the clock: a waiter can give up during a stall that carried it past
  // the session's validity before the session's expiry timer ran, and a keep-alive answered then renews
  // the session and this key, which would reach the head and hold the lock for nobody (#13 bug 1).
  if (context.closing.aborted || session.signal.aborted) {
    checkIn();
    return;
  }
  let leftover: (() => Promise<void>) | undefined;
  if (ticket) {
    const withdrawTicket = () => withdraw(context, ticket).then(() => undefined);
    const answered = await withdrawTicket().then(
      () => true,
      () => false,
    );
    if (!answered) leftover = withdrawTicket;
  } else if (error instanceof UnansweredJoin) {
    // join() already tried once within its deadline.
    const { key } = error;
    const mark = joinMarkOf(context.prefix, session);
    leftover = () => clearUnansweredJoin(context, key, mark, session.id);
  }
  if (!leftover || !session.alive || context.closing.aborted) {
    checkIn();
    return;
  }
  void context.track(withdrawInBackground(leftover, session, context.closing).finally(checkIn));
}

/** The stop signal, its deadline counted from `startedAt` (when the caller asked), not from now. */
function stopFor(context: QueueContext, options: WaitOptions, startedAt: number): Stop {
  const left = options.waitMs - (monotonicNow() - startedAt);
  const deadline = deadlineSignal(left, () => new LockTimeoutError(options.name, options.waitMs));
  const any = anySignal([options.signal, deadline.signal, context.closing]);
  return {
    signal: any.signal,
    clear: () => {
      deadline.clear();
      any.dispose();
    },
  };
}

/** Checks a session out of `pool`, waiting for a grant; a reservation that comes too late goes back. */
async function checkOutWaiting(
  pool: SessionPool,
  options: WaitOptions,
  stop: AbortSignal,
): Promise<{ session: Session; checkIn: () => void }> {
  const checkingOut = pool.checkOut(options.ttlMs, options.queue);
  return await untilAborted(checkingOut, stop).catch((error: unknown) => {
    checkingOut.then(
      (late) => late.checkIn(),
      () => {},
    );
    throw error;
  });
}

function translate(error: unknown, options: WaitOptions, context: QueueContext): Error {
  if (options.signal?.aborted) return new LockAbortedError(options.name, { cause: options.signal.reason });
  if (context.closing.aborted) return context.closing.reason as Error;
  if (isFencekitError(error)) return error;
  return toBackendError('waiting', error);
}
