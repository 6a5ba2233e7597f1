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
export { type SetOp, type SetState, set } from './set.js';
export { canonicalJson, type Scalar, toScalar } from './values.js';
