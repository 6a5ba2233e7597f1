export {
  type CheckOptions,
  checkLinearizable,
  type LinearizabilityResult,
  type PartitionResult,
} from './check.js';
export type { UnplacedOp, Witness } from './witness.js';
