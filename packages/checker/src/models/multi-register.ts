import { EdnMap, Keyword } from '../history/edn-types.js';
import { HistoryShapeError } from '../history/errors.js';
import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';
import { describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { canonicalJson, type Scalar, toScalar, unsupported } from './values.js';

/** The registers' values as canonical JSON of a sorted [key, value] list: a primitive state. */
export type MultiRegisterState = string;

/** One micro-op of a transaction: `[read k v]` or `[write k v]`. */
export interface MicroOp {
  write: boolean;
  key: string;
  value: Scalar;
}

export interface TxnOp {
  micro: MicroOp[];
  known: boolean;
}

const WRONG_READ: Inconsistent = inconsistent('a transaction read a value the register did not hold');

/**
 * Knossos's multi-register: `txn` of `[[read k v] [write k v] …]` applied atomically. A read of nil
 * in a completed txn matches any value, as in knossos (it records reads it did not observe as nil).
 */
export function multiRegister(
  initial: Record<string, unknown> | EdnMap = {},
): Model<MultiRegisterState, TxnOp> {
  const start = encode(new Map(startEntries(initial)));
  return {
    name: 'multi-register',
    init: () => start,
    prepare(op: Operation): TxnOp {
      if (op.f !== 'txn') return unsupported('multi-register', op);
      const known = op.status === 'ok';
      const source = known ? op.output : op.input;
      if (!Array.isArray(source))
        throw new HistoryShapeError(`op ${op.id}`, 'txn value must be a list of [f key value]');
      const micro = source.map((m): MicroOp => {
        const f = Array.isArray(m) ? name(m[0]) : undefined;
        if (!Array.isArray(m) || m.length !== 3 || (f !== 'read' && f !== 'write')) {
          throw new HistoryShapeError(
            `op ${op.id}`,
            `txn micro-op must be [read|write key value], got ${showValue(m)}`,
          );
        }
        return { write: f === 'write', key: registerName(m[1]), value: toScalar(m[2]) };
      });
      return { micro, known };
    },
    step(state: MultiRegisterState, op: TxnOp): MultiRegisterState | Inconsistent {
      const values = decode(state);
      let changed = false;
      for (const m of op.micro) {
        if (m.write) {
          values.set(m.key, m.value);
          changed = true;
        } else if (op.known && m.value !== null && (values.get(m.key) ?? null) !== m.value) {
          return WRONG_READ;
        }
      }
      return changed ? encode(values) : state;
    },
    readOnly: (op) => op.micro.every((m) => !m.write),
    describeState: (s) => s,
    describe: describeOperation,
  };
}

/** A micro-op's `f`: `"read"` in JSON, `:read` in EDN. */
function name(f: unknown): string | undefined {
  return f instanceof Keyword ? f.name : typeof f === 'string' ? f : undefined;
}

/**
 * A register's name: the key's canonical text, which carries its type, so two keys name one register
 * exactly when Clojure's `=` holds (`:x`, `"x"` and the symbol `x` are three registers; `1` and `"1"`
 * two), as in knossos, whose registers live in a Clojure map.
 */
function registerName(key: unknown): string {
  return canonicalJson(key);
}

/**
 * The registers an initial value starts. An EDN map (`--initial-value {:x 0}` on an EDN history) keys
 * its registers as written. A JS object's keys are strings that cannot say whether they mean the JSON
 * string `"x"` (a JSONL history) or knossos' keyword `:x` (an EDN history), so each one starts both.
 */
function startEntries(initial: Record<string, unknown> | EdnMap): [string, Scalar][] {
  if (initial instanceof EdnMap) return initial.entries.map(([k, v]) => [registerName(k), toScalar(v)]);
  return Object.entries(initial).flatMap(([k, v]): [string, Scalar][] => [
    [registerName(k), toScalar(v)],
    [registerName(new Keyword(k)), toScalar(v)],
  ]);
}

function encode(values: Map<string, Scalar>): MultiRegisterState {
  return JSON.stringify([...values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function decode(state: MultiRegisterState): Map<string, Scalar> {
  return new Map(JSON.parse(state) as [string, Scalar][]);
}
