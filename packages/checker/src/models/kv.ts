import { HistoryShapeError } from '../history/errors.js';
import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';
import { describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { unsupported } from './values.js';

/** A key-value op compacted for the search. The key is gone: each key is checked as its own history. */
export interface KvOp {
  kind: 0 | 1 | 2;
  /** get: the value returned; put/append: the argument. */
  value: string;
  /** false for a get whose result is unknown. */
  known: boolean;
}

const GET = 0;
const PUT = 1;
const APPEND = 2;
const WRONG_GET: Inconsistent = inconsistent('get returned a value the key did not hold');

function asString(op: Operation, value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  throw new HistoryShapeError(`op ${op.id}`, `${what} must be a string, got ${showValue(value)}`);
}

/**
 * Porcupine's key-value store: `get` returns the key's string, `put` replaces it, `append` adds to its
 * end; missing keys read as "". Partitioned by `key`, so each key is checked on its own and the
 * state is one string.
 */
export function kv(): Model<string, KvOp> {
  return {
    name: 'kv',
    init: () => '',
    prepare(op: Operation): KvOp {
      if (op.key === undefined) throw new HistoryShapeError(`op ${op.id}`, 'kv ops need a key');
      switch (op.f) {
        case 'get':
          return {
            kind: GET,
            value: op.status === 'ok' ? asString(op, op.output, 'get output') : '',
            known: op.status === 'ok',
          };
        case 'put':
          return { kind: PUT, value: asString(op, op.input, 'put value'), known: true };
        case 'append':
          return { kind: APPEND, value: asString(op, op.input, 'append value'), known: true };
        default:
          return unsupported('kv', op);
      }
    },
    step(state: string, op: KvOp): string | Inconsistent {
      if (op.kind === GET) return !op.known || state === op.value ? state : WRONG_GET;
      if (op.kind === PUT) return op.value;
      return state + op.value;
    },
    // State only grows by appends until a put resets it, so a get of G is unreachable once the state is
    // no prefix of G and every put whose value is a prefix of G (one the state could restart from) is used.
    unreachable(_ops, prepared) {
      const restarts = prepared.map((get) =>
        get.kind === GET && get.known
          ? prepared.flatMap((put, slot) =>
              put.kind === PUT && get.value.startsWith(put.value) ? [slot] : [],
            )
          : undefined,
      );
      return {
        watch: restarts.flatMap((from, slot) => (from === undefined ? [] : [slot])),
        test(state, slot, placed) {
          const get = prepared[slot] as KvOp;
          if (get.value.startsWith(state)) return false;
          for (const put of restarts[slot] ?? []) if (!placed(put)) return false;
          return true;
        },
      };
    },
    partition: (op) => op.key ?? '',
    readOnly: (op) => op.kind === GET,
    describeState: (state) => JSON.stringify(state),
    describe: describeOperation,
  };
}
