/**
 * @fencekit/checker: histories in (JSONL, Jepsen EDN, porcupine logs), verdicts out.
 * - `./history`: the history types and codecs;
 * - `./linearizability`: the search (WGL with a state cache, P-compositionality, time and memory budgets);
 * - `./models`: sequential specifications for the linearizability search;
 * - `./lock`: checks of lock histories by what the protected resource saw;
 * - `./verdict`: Jepsen-style composition (illegal > unknown > ok, a crash is never a pass);
 * - `./html`: the self-contained report page.
 */

/** Terminal-safe text, for other tools that print what a history or a stored file says. */
export { escapeLine, escapeText } from './cli/terminal.js';
export * from './history/index.js';
export * from './html/index.js';
export * from './linearizability/index.js';
export * from './lock/index.js';
export * from './models/index.js';
/** The duration and size syntax of fencekit's command lines (`fencekit-check` and `fencekit`). */
export { parseDuration, parseSize, UnitSyntaxError } from './units.js';
export {
  type Checker,
  type CheckResult,
  type CompositeResult,
  composeVerdicts,
  isVerdict,
  nothingToCheck,
  runCheckers,
} from './verdict.js';
