export { loadBackend } from './backends/index.js';
export type {
  BackendFactory,
  BackendName,
  ClientBackend,
  Deployment,
  FaultDriver,
  Provider,
} from './backends/types.js';
export { BACKENDS } from './backends/types.js';
export { type CheckOutcome, checkHistory } from './check/check.js';
export { recheckRun } from './check/recheck.js';
export { FAULT_NAMES, FAULTS, type FaultName } from './nemesis/faults.js';
export { SCENARIO_NAMES, SCENARIOS, type ScenarioName } from './nemesis/scenarios.js';
export { faultSchedule } from './nemesis/schedule.js';
export { renderSiteIndex, storedRuns, writeSiteIndex } from './report/site.js';
export {
  OptionsError,
  type ParsedRunOptions,
  parseDuration,
  parseRunOptions,
  type RunOptionsInput,
} from './run/options.js';
export type { RunMeta, RunResults } from './run/output.js';
export { type RunHooks, type RunSummary, runOnce } from './run/run.js';
export { type SuiteEntry, suiteMatrix } from './suite/matrix.js';
export { runSuite, type SuiteOutcome } from './suite/suite.js';
export { WORKLOADS, type WorkloadName } from './workloads/types.js';
