import type { HistoryEvent, ProcessId } from '../history/types.js';

/**
 * What the protected resource saw, as recorded by the harness into the same history.jsonl as the client
 * operations. The lock checkers judge the lock by these events alone: the resource is the only party
 * whose view matters (a client that believes it holds the lock proves nothing).
 *
 * Every resource event is one line with `process: "resource"` and `type: "ok"` (it is an observation,
 * not an operation with a duration), `time` in ns on the history's monotonic clock, and an optional `key`
 * naming the protected resource when a run protects several. Each `value` names the `client` (the
 * client's process id in the history) on whose behalf the resource acted.
 *
 * Fences are decimal strings (they are bigints and JSON numbers lose precision past 2^53); numbers are
 * accepted too.
 */
export const RESOURCE_PROCESS = 'resource';

/** A client's process id, as in the client's own invoke/ok lines. */
export type ClientId = ProcessId;

/** A fencing token as it appears in JSON. */
export type FenceValue = string | number;

/**
 * A client entered its critical section (mutex workload). `accepted: false` means the resource refused
 * entry (stale fence): no section opens.
 */
export interface EnterValue {
  client: ClientId;
  fence?: FenceValue;
  accepted: boolean;
}

/**
 * A client left its critical section. A section with no `leave` stays open to the end of the history,
 * because its holder may still act; when the harness kills a client it may close the section with
 * `crashed: true` (the holder can no longer act).
 */
export interface LeaveValue {
  client: ClientId;
  fence?: FenceValue;
  crashed?: boolean;
}

/** The resource set the inventory's starting stock (once, before any sale). */
export interface InitValue {
  stock: number;
}

/** A client read the stock (inventory workload). */
export interface ReadValue {
  client: ClientId;
  stock: number;
  fence?: FenceValue;
}

/**
 * A client wrote a new stock value (`stock` = the value written, normally what it read minus one).
 * `accepted: false` = the resource refused the write (stale fence) and the stock did not change.
 */
export interface WriteValue {
  client: ClientId;
  stock?: number;
  fence?: FenceValue;
  accepted: boolean;
}

/** A leader wrote a term-stamped claim (election workload). */
export interface ClaimValue {
  client: ClientId;
  term: FenceValue;
  fence?: FenceValue;
  accepted: boolean;
}

/** A worker executed the job for one tick (cron workload). `accepted: false` = refused, did not run. */
export interface RunValue {
  client: ClientId;
  tick: number | string;
  job?: string;
  fence?: FenceValue;
  accepted?: boolean;
}

/**
 * A client entered the semaphore's pool with `permits` (default 1) of its `limit` (semaphore workload);
 * `inside` is the resource's own count after it (shown, not trusted). `accepted: false` = refused.
 */
export interface SemEnterValue {
  client: ClientId;
  permits?: number;
  limit?: number;
  fence?: FenceValue;
  inside?: number;
  accepted?: boolean;
}

/** A `read` or `write` holder entered (rwlock workload). `accepted: false` = refused, nothing opens. */
export interface RwEnterValue {
  client: ClientId;
  mode: 'read' | 'write';
  fence?: FenceValue;
  accepted: boolean;
}

/** A reader read, or a writer wrote, the register (rwlock workload). */
export interface RwAccessValue {
  client: ClientId;
  fence?: FenceValue;
  value?: unknown;
  writtenFence?: FenceValue;
  accepted: boolean;
}

/** A client left the semaphore's pool (`sem-leave`) or the read-write lock (`rw-leave`). */
export interface SharedLeaveValue {
  client: ClientId;
  fence?: FenceValue;
}

interface ResourceEventOf<F extends string, V> extends HistoryEvent {
  process: typeof RESOURCE_PROCESS;
  type: 'ok';
  f: F;
  value: V;
}

export type EnterEvent = ResourceEventOf<'enter', EnterValue>;
export type LeaveEvent = ResourceEventOf<'leave', LeaveValue>;
export type InitEvent = ResourceEventOf<'init', InitValue>;
export type ReadEvent = ResourceEventOf<'read', ReadValue>;
export type WriteEvent = ResourceEventOf<'write', WriteValue>;
export type ClaimEvent = ResourceEventOf<'claim', ClaimValue>;
export type RunEvent = ResourceEventOf<'run', RunValue>;
export type SemEnterEvent = ResourceEventOf<'sem-enter', SemEnterValue>;
export type SemLeaveEvent = ResourceEventOf<'sem-leave', SharedLeaveValue>;
export type RwEnterEvent = ResourceEventOf<'rw-enter', RwEnterValue>;
export type RwReadEvent = ResourceEventOf<'rw-read', RwAccessValue>;
export type RwWriteEvent = ResourceEventOf<'rw-write', RwAccessValue>;
export type RwLeaveEvent = ResourceEventOf<'rw-leave', SharedLeaveValue>;

/** Any line the resource records. */
export type ResourceEvent =
  | EnterEvent
  | LeaveEvent
  | InitEvent
  | ReadEvent
  | WriteEvent
  | ClaimEvent
  | RunEvent
  | SemEnterEvent
  | SemLeaveEvent
  | RwEnterEvent
  | RwReadEvent
  | RwWriteEvent
  | RwLeaveEvent;

export type ResourceEventKind = ResourceEvent['f'];

/**
 * Client-side operation of the inventory workload: one purchase, recorded by the client as
 * `invoke` then `ok` (the sale was acknowledged), `fail` (it certainly did not happen) or `info` (unknown).
 */
export const SALE_F = 'buy';

/** True for events recorded by the resource (as opposed to clients or the nemesis). */
export function isResourceEvent(event: HistoryEvent): event is ResourceEvent {
  return event.process === RESOURCE_PROCESS;
}
