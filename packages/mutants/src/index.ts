export { adapterModule, patchMethod } from './internals.js';
export { type Validity, type ValidityEvent, withValidity } from './lease-view.js';
export {
  type Exposure,
  type Mutant,
  type MutantBackend,
  type MutantHooks,
  MutantTargetError,
  UnknownMutantError,
} from './mutant.js';
export { findMutant, MUTANTS } from './registry.js';
