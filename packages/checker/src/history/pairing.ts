import { PairingError } from './errors.js';
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
 * `PairingError` (a `HistoryShapeError`) for a completion without an open invoke, a second invoke while one is open,
 * a completion whose `f` differs from its invoke, or one stamped before its invoke.
 */
export function pairOperations(events: Iterable<HistoryEvent>, options: PairingOptions = {}): Operation[] {
  const pairer = new OperationPairer(options);
  for (const e of events) pairer.add(e);
  return pairer.finish();
}

/** `pairOperations` over a stream (e.g. `readHistoryJsonl`), holding only the operations in memory. */
export async function pairOperationsAsync(
  events: AsyncIterable<HistoryEvent>,
  options: PairingOptions = {},
): Promise<Operation[]> {
  const pairer = new OperationPairer(options);
  for await (const e of events) pairer.add(e);
  return pairer.finish();
}

/** Incremental pairing: feed events in history order with `add`, then take the operations with `finish`. */
export class OperationPairer {
  readonly #keepFailed: boolean;
  readonly #byIndex: boolean;
  readonly #open = new Map<ProcessId, Operation>();
  readonly #ops: Operation[] = [];
  #position = -1;

  constructor(options: PairingOptions = {}) {
    this.#keepFailed = options.failed === 'keep';
    this.#byIndex = options.clock === 'index';
  }

  add(e: HistoryEvent): void {
    this.#position++;
    if (e.process === 'nemesis') return;
    const at = this.#byIndex ? e.index : e.time;
    if (e.type === 'invoke') {
      const pending = this.#open.get(e.process);
      if (pending !== undefined) {
        throw new PairingError(
          this.#position,
          `a completion of process ${String(e.process)}'s :${pending.f} (invoked at ${pending.call}) before its next invoke`,
          `:invoke :${e.f}`,
        );
      }
      const op: Operation = {
        id: this.#ops.length,
        process: e.process,
        f: e.f,
        input: e.value,
        output: undefined,
        call: at,
        ret: Number.POSITIVE_INFINITY,
        status: 'info',
      };
      if (e.key !== undefined) op.key = e.key;
      this.#ops.push(op);
      this.#open.set(e.process, op);
      return;
    }
    const op = this.#open.get(e.process);
    if (op === undefined) {
      // Jepsen writes `info` for processes that crashed without a recorded invoke (e.g. on teardown).
      if (e.type === 'info') return;
      throw new PairingError(
        this.#position,
        `an open invoke by process ${String(e.process)} before this completion`,
        `:${e.type} :${e.f}`,
      );
    }
    if (op.f !== e.f) {
      throw new PairingError(
        this.#position,
        `a completion of process ${String(e.process)}'s :${op.f}`,
        `:${e.type} :${e.f}`,
      );
    }
    if (at < op.call) {
      // Time runs forward: a completion stamped before its invoke is a broken clock or a forged line,
      // and accepting it would give the op an interval that ends before it starts.
      throw new PairingError(
        this.#position,
        `a completion of process ${String(e.process)}'s :${op.f} no earlier than its invoke (${this.#byIndex ? 'index' : 'time'} ${op.call})`,
        `:${e.type} :${e.f} at ${at}`,
      );
    }
    this.#open.delete(e.process);
    op.output = e.value; // for info: kept for display, the outcome stays unknown
    if (e.type === 'info') return;
    op.ret = at;
    op.status = e.type;
    if (op.key === undefined && e.key !== undefined) op.key = e.key;
  }

  /** The operations, ids renumbered 0…n-1 in invocation order (failed ones dropped unless kept). */
  finish(): Operation[] {
    const kept = this.#keepFailed ? this.#ops : this.#ops.filter((op) => op.status !== 'fail');
    for (let i = 0; i < kept.length; i++) (kept[i] as Operation).id = i;
    return kept;
  }
}
