/**
 * `@fencekit/core/bench`: what every package's benchmark measures the same way (percentiles,
 * Jain's fairness index, the contended ring), so the tables of different packages mean the same.
 */
export {
  type BenchLocker,
  type ContendedOptions,
  type ContendedResult,
  measureContended,
  type Unlock,
} from './contended.js';
export {
  type ContendedPermitsOptions,
  type ContendedPermitsResult,
  measureContendedPermits,
} from './contended-permits.js';
export {
  type BenchCycle,
  type InterleavedOptions,
  type InterleavedResult,
  measureInterleaved,
} from './interleaved.js';
export { jainIndex, median, percentile } from './stats.js';
