import type { Operation } from '../history/types.js';
import { type Conviction, describeOperation, type Inconsistent, inconsistent, type Model } from './model.js';
import { convictStaleReads, type RegisterWrite } from './register-convict.js';
import { casPair, describeScalar, type Scalar, toScalar, unsupported } from './values.js';

const READ = 0;
const WRITE = 1;
const CAS = 2;

/** A register op compacted for the search: what it does, its operands, and whether its output is known. */
export interface RegisterOp {
  kind: 0 | 1 | 2;
  /** read: the value returned; write: the value written; cas: the expected value. */
  a: Scalar;
  /** cas: the new value. */
  b: Scalar;
  /** false when the outcome is unknown (`info`): any read result, a cas that may or may not have applied. */
  known: boolean;
  /** cas with a known outcome: did the compare succeed? */
  swapped: boolean;
}

export interface RegisterOptions {
  /** Value before the first write (default null, i.e. "no value"). */
  initial?: unknown;
}

const WRONG_READ: Inconsistent = inconsistent('read a value the register did not hold');
const CAS_SHOULD_FAIL: Inconsistent = inconsistent(
  'cas succeeded but the register did not hold the expected value',
);
const CAS_SHOULD_SWAP: Inconsistent = inconsistent('cas failed but the register held the expected value');

function makeRegister(name: string, withCas: boolean, options: RegisterOptions): Model<Scalar, RegisterOp> {
  const initial = toScalar(options.initial ?? null);
  return {
    name,
    init: () => initial,
    prepare(op: Operation): RegisterOp {
      const known = op.status === 'ok';
      switch (op.f) {
        case 'read':
          return { kind: READ, a: known ? toScalar(op.output) : null, b: null, known, swapped: false };
        case 'write':
          return { kind: WRITE, a: toScalar(op.input), b: null, known, swapped: false };
        case 'cas': {
          if (!withCas) return unsupported(name, op);
          const [from, to] = casPair(op);
          return {
            kind: CAS,
            a: toScalar(from),
            b: toScalar(to),
            known,
            swapped: known && op.output !== false,
          };
        }
        default:
          return unsupported(name, op);
      }
    },
    step(state: Scalar, op: RegisterOp): Scalar | Inconsistent {
      if (op.kind === READ) return !op.known || state === op.a ? state : WRONG_READ;
      if (op.kind === WRITE) return op.a;
      if (!op.known) return state === op.a ? op.b : state;
      if (op.swapped) return state === op.a ? op.b : CAS_SHOULD_FAIL;
      return state === op.a ? CAS_SHOULD_SWAP : state;
    },
    readOnly: (op) => op.kind === READ || (op.kind === CAS && op.known && !op.swapped),
    describeState: describeScalar,
    describe: describeOperation,
    convict(ops: readonly Operation[]): Conviction | undefined {
      const reads: { op: Operation; value: Scalar }[] = [];
      const writes: RegisterWrite[] = [];
      for (const op of ops) {
        if (op.status === 'fail') continue;
        if (op.f === 'read' && op.status === 'ok') reads.push({ op, value: toScalar(op.output) });
        else if (op.f === 'write')
          writes.push({ op, value: toScalar(op.input), definite: op.status === 'ok' });
        else if (op.f === 'cas' && !(op.status === 'ok' && op.output === false)) {
          writes.push({ op, value: toScalar(casPair(op)[1]), definite: op.status === 'ok' });
        }
      }
      return convictStaleReads(initial, reads, writes);
    },
  };
}

/** A read/write register (Jepsen's `register`). Reads return the last value written. */
export function register(options: RegisterOptions = {}): Model<Scalar, RegisterOp> {
  return makeRegister('register', false, options);
}

/**
 * A compare-and-set register: read, write, and cas `[old, new]`. A cas completed with output `false`
 * failed its compare (porcupine's reading); any other completed cas swapped.
 */
export function casRegister(options: RegisterOptions = {}): Model<Scalar, RegisterOp> {
  return makeRegister('cas-register', true, options);
}
