/**
 * Sequential specifications for the linearizability search, and the op shapes each one reads
 * (`f`, the invoke's `value` as input, the completion's `value` as output):
 * - `register` / `cas-register`: `read` → value; `write v`; `cas [old, new]` (or `{from, to}`), a
 *   completed cas with output `false` failed its compare (porcupine), any other completed cas swapped.
 * - `kv` (porcupine's): `get` → string, `put s`, `append s`, each with `key`; checked per key.
 * - `mutex`: `acquire` (input `{ttlMs?, owner?}`, output `{fence?}`), `release` (input `{owner?}`);
 *   holders are `owner` if given, else the process.
 * - `fenced-register`: `write {value, fence}` (output `false` / `{accepted: false}` when refused), `read` → value.
 * - `set`: `add x`, `read` → array of members.
 * - `multi-register` (knossos): `txn [[read k v] [write k v] …]`.
 * Ops with status `info` may or may not have taken effect; `fail` ops are dropped before the search.
 */
export { type FencedOp, type FencedState, fencedRegister } from './fenced-register.js';
export { type KvOp, kv } from './kv.js';
export {
  type AnyModel,
  type Conviction,
  describeOperation,
  Inconsistent,
  inconsistent,
  type Model,
} from './model.js';
export { type MicroOp, type MultiRegisterState, multiRegister, type TxnOp } from './multi-register.js';
export { hashString, type MutexOp, type MutexOptions, type MutexState, mutex } from './mutex.js';
export { casRegister, type RegisterOp, type RegisterOptions, register } from './register.js';
export { builtinModels, modelByName } from './registry.js';
export {
  type AppliedSemantics,
  applySemantics,
  INITIAL_VALUE_MODELS,
  type IndependentMode,
  MODEL_OPERATIONS,
  modelWithInitialValue,
  parseInitialValue,
  type SemanticsName,
  type SemanticsOptions,
  SemanticsTimeoutError,
} from './semantics.js';
export { type SetOp, type SetOptions, type SetState, set } from './set.js';
export { canonicalJson, describeScalar, type Scalar, toScalar } from './values.js';
