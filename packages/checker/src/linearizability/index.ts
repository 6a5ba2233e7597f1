export {
  type CheckOptions,
  checkLinearizable,
  checkLinearizableAsync,
  type LinearizabilityResult,
  type PartitionResult,
} from './check.js';
export type { UnplacedOp, Witness } from './witness.js';
