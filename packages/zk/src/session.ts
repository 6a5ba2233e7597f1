/// <reference path="./node-zookeeper-client.d.ts" preserve="true" />
import { ClientClosedError, InvalidArgumentError, monotonicNow } from '@fencekit/core';
import zookeeper, { type Client, type Stat, type Watcher, type ZkException } from 'node-zookeeper-client';
import { type Created, create2 } from './create2.js';
import { deleteNode } from './delete.js';
import { getData, type Listing, listChildren, type NodeData } from './read.js';
import type { Cancel } from './wait-scope.js';
import { connectionOf } from './wire.js';
import { ZkCallError, ZkCode } from './zk-errors.js';

/**
 * How the connection to the ensemble stands, in Curator's terms: `suspended` = the connection is
 * gone but the session may still be alive (nobody knows whether our ephemeral nodes still exist);
 * `reconnected` = the same session answered again; `expired` = the session and its nodes are gone.
 */
export type SessionEvent = 'suspended' | 'reconnected' | 'expired';

export interface SessionOptions {
  /** Comma-separated `host:port` list of the ensemble. */
  servers: string;
  sessionTimeoutMs: number;
  /**
   * How long a follower cut off from its leader may still answer clients: the ensemble's
   * `syncLimit × tickTime` (see `vouchedMs`). Default `DEFAULT_FOLLOWER_LAG_MS`.
   */
  followerLagMs?: number | undefined;
}

/**
 * The follower lag assumed when none is given: ZooKeeper's sample configuration (zoo_sample.cfg, which
 * most installations keep) has tickTime 2000 and syncLimit 5, so a cut-off follower may answer for up
 * to 10 s. Assuming less than the real figure would let a lease outlive its session; assuming more
 * only shortens validity, so the default covers the common configuration, not the smallest one.
 */
export const DEFAULT_FOLLOWER_LAG_MS = 10_000;

export interface CallOptions {
  signal?: Cancel | undefined;
  /** Give up waiting for the reply after this long (the request may still be applied). */
  timeoutMs?: number | undefined;
}

/**
 * One logical ZooKeeper session for a fencekit client: connects lazily, turns callbacks into promises
 * that always settle (timeout or signal), reports suspended / reconnected / expired, and replaces the
 * underlying session after it expires. Each underlying session has a `generation`; ephemeral nodes
 * belong to the generation that created them.
 */
export class ZkSession {
  #sessionTimeoutMs: number;
  readonly #followerLagMs: number;
  readonly #servers: string;
  #client: Client | undefined;
  #connecting: Promise<void> | undefined;
  /** Rejects `#connecting`: closing the session settles every `ready()` waiter at once. */
  #failConnecting: ((error: Error) => void) | undefined;
  /** Why the session refuses to serve (closed, or the negotiated timeout leaves no validity). */
  #refusal: Error | undefined;
  #generation = 0;
  #connected = false;
  #suspendedAt: number | undefined;
  /** The latest generation this client gave up itself (`givenUp`). */
  #givenUp: number | undefined;
  /**
   * When the latest request that the current session answered was sent (`monotonicNow()`): the
   * ensemble heard from the session at or after that instant. 0 until the first answer.
   */
  #answeredSentAt = 0;
  /** When the current connection was (re)established: where the wait for an answer starts. */
  #connectedAt = 0;
  /** Fires when no request sent within the last `vouchedMs` has been answered (see `#watchOverdue`). */
  #overdueTimer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #listeners = new Set<(event: SessionEvent, generation: number) => void>();
  #liveness: NodeJS.Timeout | undefined;
  /** Calls sent and not yet settled. */
  readonly #inflight = new Set<InFlight>();
  /**
   * One timer for all the calls' deadlines, armed for the earliest (no timer per call: calls share a
   * timeout, so a later call rarely has an earlier deadline and sending one costs a comparison).
   */
  #deadlineTimer: NodeJS.Timeout | undefined;
  #deadlineAt = Number.POSITIVE_INFINITY;
  /**
   * The in-flight calls of each signal, behind one abort listener per signal (added the first time the
   * signal is seen, dropped with it): a recipe passes the same signal to every call of one acquire,
   * and adding and removing an AbortSignal listener per call cost more than the rest of the wrapper.
   */
  readonly #bySignal = new WeakMap<Cancel, Set<InFlight>>();

  constructor(options: SessionOptions) {
    this.#servers = options.servers;
    this.#followerLagMs = options.followerLagMs ?? DEFAULT_FOLLOWER_LAG_MS;
    assertLeavesValidity('sessionTimeoutMs', options.sessionTimeoutMs, this.#followerLagMs);
    this.#sessionTimeoutMs = options.sessionTimeoutMs;
  }

  /** The ensemble's follower lag allowance this session assumes (`syncLimit × tickTime`). */
  get followerLagMs(): number {
    return this.#followerLagMs;
  }

  /** The session timeout: as requested until connected, then as the ensemble granted it. */
  get sessionTimeoutMs(): number {
    return this.#sessionTimeoutMs;
  }

  /** Which underlying ZooKeeper session is current (changes after every expiry). */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Until when (on `monotonicNow()`) session `generation` is surely still alive on the ensemble, and
   * its ephemeral nodes with it: the send time of the last request it answered, plus `vouchedMs` of
   * the negotiated session timeout (⅔ of what is left after the follower lag, the leader's ping
   * cycle and a clock-rate margin; see `usableMs`). It
   * matches the read timeout (`#watchOverdue`), so a connection whose answers are late is suspended
   * as this bound passes. 0 for a generation that is not the current one. Read it when it is needed:
   * it is a bound on the session, not a promise kept by a timer.
   */
  aliveUntil(generation: number): number {
    if (generation !== this.#generation || this.#answeredSentAt === 0) return 0;
    return this.#answeredSentAt + vouchedMs(this.#sessionTimeoutMs, this.#followerLagMs);
  }

  /**
   * True when this client gave session `generation` up itself, suspended for a session timeout, rather
   * than being told by the servers that it expired. The servers may still keep it, and its ephemeral
   * nodes, for a while: through a quorum loss no leader expires anything, and a new leader counts every
   * session's timeout again from its own start. A node of such a session is not known to be gone.
   */
  givenUp(generation: number): boolean {
    return generation === this.#givenUp;
  }

  /** True while the current session is connected and answering. */
  get connected(): boolean {
    return this.#connected && !this.#closed;
  }

  get closed(): boolean {
    return this.#closed;
  }

  on(listener: (event: SessionEvent, generation: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once a session is connected; opens a new one if there is none (first use, after expiry). */
  async ready(options: CallOptions = {}): Promise<number> {
    // One deadline for the whole wait: a session given up meanwhile (suspended for a session timeout)
    // is replaced by a new one, and waiting for that one must not start the timeout over (a call
    // half a session into an outage took one and a half).
    const deadline = monotonicNow() + (options.timeoutMs ?? this.sessionTimeoutMs);
    for (;;) {
      const generation = await this.#readyOnce(options.signal, deadline);
      if (generation !== undefined) return generation;
    }
  }

  /** One wait for a connection, until `deadline`: the generation once connected, undefined if it expired first. */
  async #readyOnce(signal: Cancel | undefined, deadline: number): Promise<number | undefined> {
    if (this.#refusal) throw this.#refusal;
    if (this.#closed)
      throw new ZkCallError('connect', this.#servers, ZkCode.CONNECTION_LOSS, 'client closed');
    if (this.#connected && this.#client) return this.#generation;
    if (!this.#client) this.#open();
    this.#connecting ??= new Promise<void>((resolve, reject) => {
      const off = this.on((event) => {
        if (event === 'reconnected' || event === 'expired') {
          off();
          resolve();
        }
      });
      this.#failConnecting = (error) => {
        off();
        reject(error);
      };
    }).finally(() => {
      this.#connecting = undefined;
      this.#failConnecting = undefined;
    });
    await settleWithin(this.#connecting, 'connect', this.#servers, {
      timeoutMs: Math.max(0, deadline - monotonicNow()),
      signal,
    });
    return this.#connected ? this.#generation : undefined;
  }

  /**
   * Creates a node and answers with its path and Stat in one request (CREATE2, see `create2.ts`): a
   * queue entry's czxid, its fence or term, comes with the create's own reply.
   */
  createWithStat(path: string, data: Buffer | null, mode: number, options?: CallOptions): Promise<Created> {
    return this.#call<Created>('create', path, options, (client, done) =>
      create2(client, path, data, mode, done),
    );
  }

  /** Deletes `path` (any version). False when it did not exist. */
  async remove(path: string, options?: CallOptions): Promise<boolean> {
    try {
      await this.#call<void>('delete', path, options, (client, done) => deleteNode(client, path, -1, done));
      return true;
    } catch (error) {
      if (error instanceof ZkCallError && error.code === ZkCode.NO_NODE) return false;
      throw error;
    }
  }

  exists(path: string, watcher?: Watcher, options?: CallOptions): Promise<Stat | null> {
    return this.#call('exists', path, options, (client, done) => client.exists(path, watcher, done));
  }

  children(path: string, watcher?: Watcher, options?: CallOptions): Promise<Listing> {
    // Without a watch, fencekit sends the listing itself (`read.ts`); a watch is the library's to keep.
    return this.#call<Listing>('getChildren', path, options, (client, done) =>
      watcher
        ? client.getChildren(path, watcher, (error, children, stat) => done(error, { children, stat }))
        : listChildren(client, path, done),
    );
  }

  getData(path: string, watcher?: Watcher, options?: CallOptions): Promise<NodeData> {
    return this.#call<NodeData>('getData', path, options, (client, done) =>
      getData(client, path, watcher, done),
    );
  }

  mkdirp(path: string, options?: CallOptions): Promise<string> {
    return this.#call('mkdirp', path, options, (client, done) => client.mkdirp(path, done));
  }

  /**
   * Runs one `multi`. On failure the error's `code` is the failing op's result and `failedOp` its index,
   * so a caller can tell "the guard failed" from "the write failed".
   */
  multi(
    label: string,
    build: (tx: ReturnType<Client['transaction']>) => void,
    options?: CallOptions,
  ): Promise<void> {
    return this.#call<void>('multi', label, options, (client, done) => {
      const tx = client.transaction();
      build(tx);
      tx.commit((error, results) => {
        if (!error) return done(null, undefined);
        const failedOp = results?.findIndex((r) => r.err !== undefined && r.err !== 0 && r.err !== -2) ?? -1;
        Object.assign(error, { failedOp });
        done(error, undefined);
      });
    });
  }

  /** Ends the session: its ephemeral nodes go at once. Idempotent; leaves no timers or sockets. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#refusal ??= new ClientClosedError('ZkSession');
    this.#stopLiveness();
    this.#failInflight('client closed');
    // A waiter for a connection that will never come must not keep its timer for a session timeout.
    this.#failConnecting?.(this.#refusal);
    const client = this.#client;
    this.#client = undefined;
    this.#connected = false;
    if (client) await shutdown(client, client.getState().name === 'SYNC_CONNECTED');
    this.#listeners.clear();
  }

  #emit(event: SessionEvent, generation: number): void {
    for (const listener of [...this.#listeners]) listener(event, generation);
  }

  #open(): void {
    const generation = ++this.#generation;
    this.#answeredSentAt = 0;
    const client = zookeeper.createClient(this.#servers, {
      sessionTimeout: this.sessionTimeoutMs,
      // Retry other servers quickly: a suspended holder has already been told to stop.
      spinDelay: 100,
      retries: 0,
    });
    this.#client = client;
    client.on('connected', () => {
      if (this.#client !== client) return;
      this.#connected = true;
      this.#suspendedAt = undefined;
      this.#sessionTimeoutMs = client.getSessionTimeout();
      if (vouchedMs(this.#sessionTimeoutMs, this.#followerLagMs) < MIN_VOUCHED_MS) {
        // The ensemble clamped the timeout below what the follower lag allows: no lease could ever be
        // valid, and the read timeout would drop every connection at once. Refuse, and say why.
        this.#refusal = leavesNoValidity(
          'negotiated session timeout',
          this.#sessionTimeoutMs,
          this.#followerLagMs,
        );
        void this.close();
        return;
      }
      this.#connectedAt = monotonicNow();
      this.#startLiveness(client);
      this.#emit('reconnected', generation);
    });
    client.on('disconnected', () => {
      if (this.#client !== client) return;
      this.#suspend();
    });
    client.on('expired', () => {
      if (this.#client !== client) return;
      this.#expire(client, generation);
    });
    client.connect();
  }

  #suspend(): void {
    if (this.#suspendedAt !== undefined) return;
    this.#connected = false;
    this.#suspendedAt = monotonicNow();
    this.#emit('suspended', this.#generation);
  }

  #expire(client: Client, generation: number): void {
    this.#connected = false;
    this.#suspendedAt = undefined;
    this.#client = undefined;
    this.#stopLiveness();
    this.#failInflight('session expired');
    void shutdown(client, false);
    this.#emit('expired', generation);
  }

  /**
   * node-zookeeper-client has no read timeout: a server that stops answering without closing the
   * socket would leave us "connected" forever. We expect answers within `vouchedMs`, counted from
   * when the answered request was *sent* (the bound `aliveUntil` gives leases): a cheap read probes
   * whenever no answered request was sent within the last tick (`probeEveryMs`), and the socket is
   * dropped when the bound passes (`#watchOverdue`; the library
   * then tries the next server). While disconnected, a session older than the session timeout is
   * treated as expired (Curator does the same): the ensemble has dropped it by then.
   */
  #startLiveness(client: Client): void {
    this.#stopLiveness();
    const tickMs = probeEveryMs(this.sessionTimeoutMs, this.#followerLagMs);
    let probing = false;
    this.#liveness = setInterval(() => {
      const now = monotonicNow();
      if (this.#suspendedAt !== undefined) {
        if (now - this.#suspendedAt >= this.sessionTimeoutMs) {
          this.#givenUp = this.#generation;
          this.#expire(client, this.#generation);
        }
        return;
      }
      if (!probing && now - this.#answeredSentAt >= tickMs) {
        probing = true;
        const sentAt = monotonicNow();
        client.exists('/', undefined, (error) => {
          probing = false;
          if (this.#client === client) this.#answered(sentAt, error);
        });
      }
    }, tickMs);
    this.#liveness.unref();
    this.#watchOverdue(client);
  }

  /** Records an answer from the ensemble to a request sent at `sentAt` (a local failure is none). */
  #answered(sentAt: number, error: ZkException | null | undefined): void {
    if (error && LOCAL_FAILURES.has(error.getCode())) return;
    if (sentAt > this.#answeredSentAt) this.#answeredSentAt = sentAt;
  }

  /**
   * Suspends the connection (and drops its socket, so the library reconnects) once no request sent
   * within the last `vouchedMs`, or since the connection was made, has been answered: the
   * moment `aliveUntil` stops vouching for the session. One timer per session, re-armed when it fires
   * early because answers pushed the bound on (not per answer: that would cost a timer per request).
   */
  #watchOverdue(client: Client): void {
    clearTimeout(this.#overdueTimer);
    const dueAt = () =>
      Math.max(this.#answeredSentAt, this.#connectedAt) +
      vouchedMs(this.#sessionTimeoutMs, this.#followerLagMs);
    this.#overdueTimer = setTimeout(
      () => {
        this.#overdueTimer = undefined;
        if (this.#client !== client || this.#suspendedAt !== undefined || this.#closed) return;
        if (monotonicNow() < dueAt()) {
          this.#watchOverdue(client);
          return;
        }
        this.#suspend();
        connectionOf(client).socket?.destroy();
      },
      Math.max(0, dueAt() - monotonicNow()),
    );
    this.#overdueTimer.unref();
  }

  #stopLiveness(): void {
    if (this.#liveness !== undefined) clearInterval(this.#liveness);
    this.#liveness = undefined;
    clearTimeout(this.#overdueTimer);
    this.#overdueTimer = undefined;
  }

  /**
   * Runs `issue` with the socket corked, so the requests it sends synchronously leave in one write:
   * a create and the listing pipelined behind it cost one syscall, not two.
   */
  pipeline<T>(issue: () => T): T {
    const socket = this.#client && connectionOf(this.#client).socket;
    socket?.cork();
    try {
      return issue();
    } finally {
      socket?.uncork();
    }
  }

  /** Sends at once when connected (so `pipeline` can batch), else after the session is ready. */
  #call<T>(
    operation: string,
    path: string,
    options: CallOptions | undefined,
    invoke: (client: Client, done: Done<T>) => void,
  ): Promise<T> {
    const timeoutMs = options?.timeoutMs ?? this.sessionTimeoutMs;
    if (this.#connected && this.#client && !options?.signal?.aborted) {
      return this.#send(this.#client, operation, path, options, timeoutMs, invoke);
    }
    const started = monotonicNow();
    return this.ready({ signal: options?.signal, timeoutMs }).then(() => {
      const client = this.#client;
      if (!client) throw new ZkCallError(operation, path, ZkCode.CONNECTION_LOSS, 'no session');
      const left = Math.max(1, timeoutMs - (monotonicNow() - started));
      return this.#send(client, operation, path, options, left, invoke);
    });
  }

  /**
   * One request: a single promise settled by the reply, the signal, or the deadline (`#watchDeadline`).
   * A reply that comes after the call gave up is ignored.
   */
  #send<T>(
    client: Client,
    operation: string,
    path: string,
    options: CallOptions | undefined,
    timeoutMs: number,
    invoke: (client: Client, done: Done<T>) => void,
  ): Promise<T> {
    const signal = options?.signal;
    return new Promise<T>((resolve, reject) => {
      const calls = signal ? this.#callsOf(signal) : undefined;
      const settle = (): boolean => {
        if (!this.#inflight.delete(call)) return false;
        calls?.delete(call);
        return true;
      };
      const sentAt = monotonicNow();
      const call: InFlight = {
        deadline: sentAt + timeoutMs,
        timeOut: () => {
          if (settle()) {
            reject(
              new ZkCallError(operation, path, ZkCode.OPERATION_TIMEOUT, `no reply within ${timeoutMs} ms`),
            );
          }
        },
        fail: (detail) => {
          if (settle()) reject(new ZkCallError(operation, path, ZkCode.CONNECTION_LOSS, detail));
        },
        abort: (reason) => {
          if (settle()) reject(reason);
        },
      };
      this.#inflight.add(call);
      calls?.add(call);
      if (call.deadline < this.#deadlineAt) this.#watchDeadline(call.deadline);
      invoke(client, (error, value) => {
        if (this.#client === client) this.#answered(sentAt, error);
        if (!settle()) return;
        if (error) reject(new ZkCallError(operation, path, error.getCode(), error.name, { cause: error }));
        else resolve(value as T);
      });
    });
  }

  #callsOf(signal: Cancel): Set<InFlight> {
    let calls = this.#bySignal.get(signal);
    if (!calls) {
      const set = new Set<InFlight>();
      calls = set;
      this.#bySignal.set(signal, set);
      signal.addEventListener(
        'abort',
        () => {
          for (const call of [...set]) call.abort(signal.reason);
        },
        { once: true },
      );
    }
    return calls;
  }

  #failInflight(detail: string): void {
    for (const call of [...this.#inflight]) call.fail(detail);
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    this.#deadlineAt = Number.POSITIVE_INFINITY;
  }

  /** (Re)arms the deadline timer for `deadline`, earlier than the one it is armed for. */
  #watchDeadline(deadline: number): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineAt = deadline;
    // Clamped: Node fires a longer timer at once (and warns), which would spin.
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, deadline - monotonicNow()));
    this.#deadlineTimer = setTimeout(() => this.#timeOutCalls(), delay);
    // A pending call's deadline must not keep a process alive that has nothing else to do.
    this.#deadlineTimer.unref();
  }

  /** Fails the calls past their deadline and re-arms for the earliest left (settled calls are gone). */
  #timeOutCalls(): void {
    this.#deadlineTimer = undefined;
    this.#deadlineAt = Number.POSITIVE_INFINITY;
    const now = monotonicNow();
    let next = Number.POSITIVE_INFINITY;
    for (const call of [...this.#inflight]) {
      if (call.deadline <= now) call.timeOut();
      else if (call.deadline < next) next = call.deadline;
    }
    if (next < Number.POSITIVE_INFINITY) this.#watchDeadline(next);
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Failures the library reports by itself, without an answer from the ensemble. */
const LOCAL_FAILURES: ReadonlySet<number> = new Set([
  ZkCode.CONNECTION_LOSS,
  ZkCode.SESSION_EXPIRED,
  ZkCode.AUTH_FAILED,
]);

/**
 * How long after an answered request's send time its session is vouched for (`ZkSession.aliveUntil`):
 * ⅔ of `usableMs`. The last third covers the gap between two of our requests: a probe goes out
 * whenever none was answered within ⅙ of `usableMs` (`#startLiveness`), so consecutive sends are at
 * most two such ticks apart while answers come within one.
 */
export function vouchedMs(sessionTimeoutMs: number, followerLagMs: number): number {
  return (usableMs(sessionTimeoutMs, followerLagMs) * 2) / 3;
}

/**
 * What is left of the session timeout once what the ensemble may have missed is taken off. The
 * server a request reached restarted the session's timeout on arrival, but only the leader expires
 * sessions, and a follower reports its sessions' touches to the leader only in its replies to the
 * leader's pings (every ½ tickTime). A follower cut off from the leader keeps answering for up to
 * `syncLimit × tickTime` (`followerLagMs`) after the last ping it got, and its last ping reply may be
 * lost too. So the leader may count the session down from our last request sent before the
 * follower's second-to-last ping: up to followerLagMs + ½ tickTime + the gap between two of our
 * requests before the last answered send. ½ tickTime is taken as ¼ of followerLagMs (exact for
 * syncLimit 2, more for larger ones), and 2 % of the timeout covers clocks running at slightly
 * different rates (far above real drift; the leader rounds expiry up to a tick, which only helps).
 */
function usableMs(sessionTimeoutMs: number, followerLagMs: number): number {
  return sessionTimeoutMs * (1 - CLOCK_RATE_MARGIN) - followerLagMs * (1 + PING_CYCLE_SHARE);
}

const CLOCK_RATE_MARGIN = 0.02;
const PING_CYCLE_SHARE = 0.25;

/** The probe interval: ⅙ of `usableMs`, so that consecutive requests are at most ⅓ of it apart. */
function probeEveryMs(sessionTimeoutMs: number, followerLagMs: number): number {
  return Math.max(50, Math.floor(usableMs(sessionTimeoutMs, followerLagMs) / 6));
}

/** Throws InvalidArgumentError unless the session timeout leaves some validity after the follower lag. */
export function assertLeavesValidity(name: string, sessionTimeoutMs: number, followerLagMs: number): void {
  if (typeof followerLagMs !== 'number' || !Number.isFinite(followerLagMs) || followerLagMs < 0) {
    throw new InvalidArgumentError(
      'followerLagMs',
      followerLagMs,
      "a finite number of milliseconds ≥ 0: your ensemble's syncLimit × tickTime",
    );
  }
  if (!(vouchedMs(sessionTimeoutMs, followerLagMs) >= MIN_VOUCHED_MS)) {
    throw leavesNoValidity(name, sessionTimeoutMs, followerLagMs);
  }
}

/** Less validity than this per answer would end leases between two probes of a busy machine. */
const MIN_VOUCHED_MS = 100;

function leavesNoValidity(
  name: string,
  sessionTimeoutMs: number,
  followerLagMs: number,
): InvalidArgumentError {
  const least = Math.ceil(
    ((MIN_VOUCHED_MS * 3) / 2 + followerLagMs * (1 + PING_CYCLE_SHARE)) / (1 - CLOCK_RATE_MARGIN),
  );
  return new InvalidArgumentError(
    name,
    sessionTimeoutMs,
    `at least ${least} ms with followerLagMs ${followerLagMs} (syncLimit × tickTime): a shorter session leaves a lease no validity`,
  );
}

/**
 * The callback a request's reply settles: the library's and fencekit's own senders (`create2.ts`,
 * `delete.ts`, `read.ts`) take it as it is. The value is absent on an error reply, and for DELETE,
 * which has none.
 */
type Done<T> = (error: ZkException | null, value?: T) => void;

interface InFlight {
  readonly deadline: number;
  timeOut(): void;
  fail(detail: string): void;
  abort(reason: unknown): void;
}

/** Waits for `promise`, but never longer than `timeoutMs` nor past `signal`. */
async function settleWithin<T>(
  promise: Promise<T>,
  operation: string,
  path: string,
  options: { timeoutMs: number; signal?: Cancel | undefined },
): Promise<T> {
  const { signal, timeoutMs } = options;
  if (signal?.aborted) throw signal.reason;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        // An infinite bound (a wait limited by its signal alone) needs no timer.
        if (Number.isFinite(timeoutMs)) {
          timer = setTimeout(
            () =>
              reject(
                new ZkCallError(operation, path, ZkCode.OPERATION_TIMEOUT, `no reply within ${timeoutMs} ms`),
              ),
            timeoutMs,
          );
        }
        onAbort = () => reject(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    // A late reply after a timeout is ignored, never reported as unhandled.
    promise.catch(() => {});
  }
}

/**
 * Closes an underlying client for good. node-zookeeper-client keeps reconnecting from timers after a
 * failed close, so we also stop its reconnect loop and drop its socket after a short grace.
 */
async function shutdown(client: Client, graceful: boolean): Promise<void> {
  const internals = connectionOf(client);
  if (graceful) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      client.once('disconnected', () => {
        clearTimeout(timer);
        resolve();
      });
      client.close();
    });
  } else {
    client.close();
  }
  internals.connect = () => {};
  internals.socket?.destroy();
  client.removeAllListeners();
}
