import { EdnSet } from '../history/edn-types.js';
import { HistoryShapeError } from '../history/errors.js';
import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';
import { describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { canonicalJson, unsupported } from './values.js';

/** A set state as its sorted members' canonical JSON joined by "\u0001": a primitive, so equal sets are `===`. */
export type SetState = string;

export interface SetOp {
  add: boolean;
  /** add: the member's canonical JSON; read: the whole set's state string. */
  text: string;
  known: boolean;
}

const SEP = '\u0001';
const WRONG_READ: Inconsistent = inconsistent('read a set other than the one held');

function encode(members: readonly string[]): SetState {
  return [...new Set(members)].sort().join(SEP);
}

/** A grow-only set: `add x`, and `read` returning all members (in any order). */
export function set(): Model<SetState, SetOp> {
  return {
    name: 'set',
    init: () => '',
    prepare(op: Operation): SetOp {
      const known = op.status === 'ok';
      if (op.f === 'add') return { add: true, text: canonicalJson(op.input), known };
      if (op.f !== 'read') return unsupported('set', op);
      if (!known) return { add: false, text: '', known };
      const members = op.output instanceof EdnSet ? op.output.items : op.output;
      if (!Array.isArray(members)) {
        throw new HistoryShapeError(
          `op ${op.id}`,
          `a set read returns an array or a set, got ${showValue(op.output)}`,
        );
      }
      return { add: false, text: encode(members.map((m) => canonicalJson(m))), known };
    },
    step(state: SetState, op: SetOp): SetState | Inconsistent {
      if (!op.add) return !op.known || state === op.text ? state : WRONG_READ;
      if (state === '') return op.text;
      const members = state.split(SEP);
      return members.includes(op.text) ? state : encode([...members, op.text]);
    },
    readOnly: (op) => !op.add,
    describeState: (s) => `{${s.split(SEP).join(', ')}}`,
    describe: describeOperation,
  };
}
