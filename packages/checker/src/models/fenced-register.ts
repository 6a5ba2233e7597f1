import { HistoryShapeError } from '../history/errors.js';
import { showValue } from '../history/show.js';
import type { Operation } from '../history/types.js';
import { describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { hashString } from './mutex.js';
import { describeScalar, field, type Scalar, toScalar, unsupported } from './values.js';

/** The resource's value and the highest fence it has accepted. */
export interface FencedState {
  value: Scalar;
  fence: bigint;
}

export interface FencedOp {
  read: boolean;
  value: Scalar;
  fence: bigint;
  known: boolean;
  /** write: was it accepted (ok and not `{accepted: false}` / `false`)? */
  accepted: boolean;
}

const STALE: Inconsistent = inconsistent('accepted a write whose fence is not above the highest seen');
const REFUSED_FRESH: Inconsistent = inconsistent('refused a write whose fence is above the highest seen');
const WRONG_READ: Inconsistent = inconsistent('read a value the resource did not hold');

/**
 * A resource guarded by fences: `write {value, fence}` is accepted only if `fence` exceeds every fence
 * accepted before; `read` returns the value. A write completed with output `false` or
 * `{accepted: false}` was refused, which is legal only for a stale fence.
 */
export function fencedRegister(initial: unknown = null): Model<FencedState, FencedOp> {
  const init: FencedState = { value: toScalar(initial), fence: -1n };
  return {
    name: 'fenced-register',
    init: () => init,
    prepare(op: Operation): FencedOp {
      const known = op.status === 'ok';
      if (op.f === 'read')
        return { read: true, value: known ? toScalar(op.output) : null, fence: 0n, known, accepted: false };
      if (op.f !== 'write') return unsupported('fenced-register', op);
      const fence = field(op.input, 'fence');
      if (fence === undefined || fence === null) {
        throw new HistoryShapeError(
          `op ${op.id}`,
          `a fenced write needs {value, fence}, got ${showValue(op.input)}`,
        );
      }
      const out = op.output;
      const refused = out === false || field(out, 'accepted') === false;
      return {
        read: false,
        value: toScalar(field(op.input, 'value')),
        fence: BigInt(fence as string),
        known,
        accepted: !refused,
      };
    },
    step(state: FencedState, op: FencedOp): FencedState | Inconsistent {
      if (op.read) return !op.known || state.value === op.value ? state : WRONG_READ;
      const fresh = op.fence > state.fence;
      if (!op.known) return fresh ? { value: op.value, fence: op.fence } : state;
      if (op.accepted) return fresh ? { value: op.value, fence: op.fence } : STALE;
      return fresh ? REFUSED_FRESH : state;
    },
    readOnly: (op) => op.read || (op.known && !op.accepted),
    equal: (a, b) => a.value === b.value && a.fence === b.fence,
    hash: (s) => hashString(`${String(s.value)}|${s.fence}`),
    describeState: (s) => `${describeScalar(s.value)} (fence ${s.fence})`,
    describe: describeOperation,
  };
}
