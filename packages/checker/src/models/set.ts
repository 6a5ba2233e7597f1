import { EdnSet } from '../history/edn-types.js';
import { HistoryShapeError } from '../history/errors.js';
import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';
import { describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { canonicalJson, unsupported } from './values.js';

/**
 * A set state as the JSON array of its members' canonical texts, sorted: a primitive, so equal sets
 * are `===`. JSON quotes every member, so no member's text (a keyword may hold any character) can
 * read as two members.
 */
export type SetState = string;

export interface SetOp {
  add: boolean;
  /** add: the member's canonical text; read: the whole set's state string. */
  text: string;
  known: boolean;
  /** A completed read that returned no set (an EDN vector, list or nil): equal to no set state. */
  notASet: boolean;
}

export interface SetOptions {
  /**
   * Whether a read may return an array for the set: JSON has no sets, so a JSONL history can only
   * spell one so (the default). An EDN history has sets (`#{1 2}`), and knossos compares a read with
   * Clojure's `=`, under which a vector, a list or nil is never a set: pass false for EDN.
   */
  arrayReads?: boolean;
}

const EMPTY: SetState = '[]';
const WRONG_READ: Inconsistent = inconsistent('read a set other than the one held');
const NOT_A_SET: Inconsistent = inconsistent('read a value that is no set (a vector, list or nil ≠ any set)');

function encode(members: readonly string[]): SetState {
  return JSON.stringify([...new Set(members)].sort());
}

function decode(state: SetState): string[] {
  return JSON.parse(state) as string[];
}

/** A grow-only set: `add x`, and `read` returning all members (in any order). */
export function set(options: SetOptions = {}): Model<SetState, SetOp> {
  const arrayReads = options.arrayReads ?? true;
  return {
    name: 'set',
    init: () => EMPTY,
    prepare(op: Operation): SetOp {
      const known = op.status === 'ok';
      if (op.f === 'add') return { add: true, text: canonicalJson(op.input), known, notASet: false };
      if (op.f !== 'read') return unsupported('set', op);
      if (!known) return { add: false, text: '', known, notASet: false };
      if (op.output instanceof EdnSet) {
        return {
          add: false,
          text: encode(op.output.items.map((m) => canonicalJson(m))),
          known,
          notASet: false,
        };
      }
      if (!arrayReads) return { add: false, text: '', known, notASet: true };
      if (!Array.isArray(op.output)) {
        throw new HistoryShapeError(
          `op ${op.id}`,
          `a set read returns an array or a set, got ${showValue(op.output)}`,
        );
      }
      return { add: false, text: encode(op.output.map((m) => canonicalJson(m))), known, notASet: false };
    },
    step(state: SetState, op: SetOp): SetState | Inconsistent {
      if (!op.add) {
        if (!op.known) return state;
        if (op.notASet) return NOT_A_SET;
        return state === op.text ? state : WRONG_READ;
      }
      const members = decode(state);
      return members.includes(op.text) ? state : encode([...members, op.text]);
    },
    readOnly: (op) => !op.add,
    describeState: (s) => `{${decode(s).join(', ')}}`,
    describe: describeOperation,
  };
}
