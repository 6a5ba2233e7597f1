import { HistoryShapeError } from './errors.js';
import type { HistoryEvent, Operation, ProcessId } from './types.js';

export interface PairingOptions {
  /**
   * `drop` (default, as knossos does): a `fail` op did not happen and is left out.
   * `keep`: it is returned with status `fail` (for checkers that count refusals); the linearizability
   * search ignores it either way.
   */
  failed?: 'drop' | 'keep';
  /** Which field orders events in real time: `time` (default) or `index` (file order, as knossos uses). */
  clock?: 'time' | 'index';
}

/**
 * Pairs every invoke with its process's next completion. `ok` closes the op at its time; `info` (and
 * an invoke never completed) leaves it open to the end (`ret = Infinity`): it may or may not have
 * happened. Events of the `nemesis` process are faults, not operations, and are skipped. Throws
 * `HistoryShapeError` for a completion without an open invoke, a second invoke while one is open, or
 * a completion whose `f` differs from its invoke.
 */
export function pairOperations(events: Iterable<HistoryEvent>, options: PairingOptions = {}): Operation[] {
  const keepFailed = options.failed === 'keep';
  const byIndex = options.clock === 'index';
  const open = new Map<ProcessId, Operation>();
  const ops: Operation[] = [];
  for (const e of events) {
    if (e.process === 'nemesis') continue;
    const at = byIndex ? e.index : e.time;
    if (e.type === 'invoke') {
      const pending = open.get(e.process);
      if (pending !== undefined) {
        throw new HistoryShapeError(
          `event ${e.index}`,
          `process ${String(e.process)} invoked :${e.f} while its :${pending.f} (invoked at ${pending.call}) is still open`,
        );
      }
      const op: Operation = {
        id: ops.length,
        process: e.process,
        f: e.f,
        input: e.value,
        output: undefined,
        call: at,
        ret: Number.POSITIVE_INFINITY,
        status: 'info',
      };
      if (e.key !== undefined) op.key = e.key;
      ops.push(op);
      open.set(e.process, op);
      continue;
    }
    const op = open.get(e.process);
    if (op === undefined) {
      // Jepsen writes `info` for processes that crashed without a recorded invoke (e.g. on teardown).
      if (e.type === 'info') continue;
      throw new HistoryShapeError(
        `event ${e.index}`,
        `:${e.type} :${e.f} by process ${String(e.process)} has no open invoke`,
      );
    }
    if (op.f !== e.f) {
      throw new HistoryShapeError(
        `event ${e.index}`,
        `:${e.type} :${e.f} completes process ${String(e.process)}'s :${op.f}`,
      );
    }
    open.delete(e.process);
    if (e.type === 'info') {
      op.output = e.value; // kept for display; the outcome stays unknown
      continue;
    }
    op.output = e.value;
    op.ret = at;
    op.status = e.type;
    if (op.key === undefined && e.key !== undefined) op.key = e.key;
  }
  const kept = keepFailed ? ops : ops.filter((op) => op.status !== 'fail');
  for (let i = 0; i < kept.length; i++) (kept[i] as Operation).id = i;
  return kept;
}
