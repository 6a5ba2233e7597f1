import {
  HistoryParseError,
  HistoryReadAbortedError,
  HistoryReadError,
  HistoryShapeError,
} from '../history/errors.js';
import { readJepsenEdn } from '../history/jepsen-edn.js';
import { readHistoryJsonlLines } from '../history/jsonl.js';
import { formatFromPath, type HistoryFormat, pairLines } from '../history/load.js';
import { readPorcupineLog } from '../history/porcupine-log.js';
import type { ReadOptions } from '../history/read-options.js';
import type { HistoryEvent, Operation } from '../history/types.js';
import { checkLinearizable, type LinearizabilityResult } from '../linearizability/index.js';
import { checkCron } from '../lock/cron.js';
import { checkElection } from '../lock/election.js';
import { LockHistoryError } from '../lock/errors.js';
import { RESOURCE_PROCESS } from '../lock/events.js';
import { checkFences } from '../lock/fence.js';
import { checkInventory } from '../lock/inventory.js';
import { checkMutex } from '../lock/mutex.js';
import { checkReadWriteLock } from '../lock/rwlock.js';
import { checkSemaphore } from '../lock/semaphore.js';
import type { AnyModel } from '../models/model.js';
import {
  type AppliedSemantics,
  applySemantics,
  modelWithInitialValue,
  parseInitialValue,
  type SemanticsName,
  SemanticsTimeoutError,
} from '../models/semantics.js';
import {
  type Checker,
  type CheckResult,
  type CompositeResult,
  composeVerdicts,
  nothingToCheck,
  runCheckers,
} from '../verdict.js';
import { type CliOptions, FORMATS, type LockChecker, lockCheckers } from './arguments.js';

/** A bad flag or file: reported on stderr with exit code 3, never as a verdict. */
export class BadInputError extends Error {}

/** What one run checked, for the report and the exit code. */
export interface Outcome {
  composite: CompositeResult;
  format: HistoryFormat;
  /** What the HTML report draws: the events (lock lanes and timelines) or the paired operations. */
  drawn: readonly HistoryEvent[] | readonly Operation[];
  /** Checks only `--checker all` asked for that found nothing to judge: shown, not counted. */
  notCounted: readonly string[];
  /** How the ops were read for the model (with `--model`). */
  semantics?: AppliedSemantics;
}

/** Most bytes a gzipped history may decompress to, unless `--max-decompressed` says otherwise. */
export const CLI_MAX_DECOMPRESSED = 2 ** 30;

/** What was read: the events (JSONL only, with their lines), and the paired client operations. */
interface Loaded {
  events?: HistoryEvent[];
  lines?: number[];
  operations: Operation[];
  /** Events read, nemesis and resource lines included: 0 means an empty file. */
  count: number;
}

/**
 * Loads the history and runs every check the flags ask for; bad input throws, verdicts never do.
 * `options.timeout` bounds the whole run: reading and pairing spend from it, and the search gets
 * what is left. A read that outlasts it ends every check `unknown`.
 */
export async function check(file: string, options: CliOptions): Promise<Outcome> {
  const started = performance.now();
  if (options.model === undefined && options.checker === undefined) {
    throw new BadInputError('say what to check: --model <model> and/or --checker <names>');
  }
  const format = options.format ?? formatFromPath(file);
  if (format === undefined) {
    throw new BadInputError(
      `cannot tell the format of ${file} from its name; pass --format ${FORMATS.join('|')}`,
    );
  }
  if (options.checker !== undefined && format !== 'jsonl') {
    throw new BadInputError(`lock checkers read harness histories (jsonl), not ${format}`);
  }
  if (options.initialValue !== undefined && options.model === undefined)
    throw new BadInputError('--initial-value needs a --model');
  const semantics: SemanticsName = options.semantics ?? (format === 'edn' ? 'knossos' : 'strict');
  const initial =
    options.initialValue === undefined
      ? undefined
      : parseInitialValue(options.initialValue, format === 'edn');
  let model: AnyModel | undefined =
    options.model === undefined ? undefined : modelWithInitialValue(options.model, initial, format === 'edn');
  if (options.model !== undefined && model === undefined)
    throw new BadInputError(`unknown model ${options.model}`);

  let loaded: Loaded;
  const budget = new AbortController();
  // setTimeout fires at once past 2^31 - 1 ms: a longer budget is as good as none for reading.
  const timer = setTimeout(() => budget.abort(), Math.min(options.timeout, 2 ** 31 - 1));
  try {
    loaded = await load(file, format, options.model !== undefined, {
      signal: budget.signal,
      nilKeyword: semantics === 'knossos',
      maxDecompressedBytes: options.maxDecompressed ?? CLI_MAX_DECOMPRESSED,
    });
  } catch (error) {
    if (!(error instanceof HistoryReadAbortedError)) throw error;
    return { composite: undecided(options, error.message), format, drawn: [], notCounted: [] };
  } finally {
    clearTimeout(timer);
  }
  // Nothing at all is not a history: say so rather than judge it (an empty file is no evidence).
  if (loaded.count === 0) throw new BadInputError(`${file} holds no events: nothing to check`);

  const checkers: Record<string, Checker<undefined>> = {};
  let badInput: Error | undefined;
  // Bad input must end as exit code 3, not be folded into `unknown` by runCheckers.
  const guard =
    (fn: () => CheckResult): Checker<undefined> =>
    () => {
      try {
        return fn();
      } catch (error) {
        if (isBadInput(error)) badInput ??= locate(error, file, loaded);
        throw error;
      }
    };
  let applied: AppliedSemantics | undefined;
  let drawnOps: Operation[] | undefined;
  if (model !== undefined && options.model !== undefined) {
    let adapted: ReturnType<typeof applySemantics>;
    try {
      adapted = applySemantics(loaded.operations, options.model, model, {
        semantics,
        deadline: started + options.timeout,
        ...(options.independent === undefined ? {} : { independent: options.independent }),
        ...(initial === undefined ? {} : { initialValue: initial }),
      });
    } catch (error) {
      if (!(error instanceof SemanticsTimeoutError)) throw error;
      return { composite: undecided(options, error.message), format, drawn: [], notCounted: [] };
    }
    applied = adapted.applied;
    model = adapted.model;
    drawnOps = adapted.ops;
  }
  if (model !== undefined) {
    const searched = model;
    const ops = drawnOps ?? loaded.operations;
    const remaining = Math.max(1, options.timeout - (performance.now() - started));
    // Pending and indeterminate ops may or may not have happened, and their results are unknown: a
    // history without one completed op constrains nothing, so it is not judged (it was `ok`, steps 0).
    checkers.linearizability = guard(() =>
      !ops.some((op) => op.status === 'ok')
        ? nothingToCheck(
            'the history has no completed client operation (only pending or indeterminate ones, faults, resource lines or failed ops)',
            {},
          )
        : asCheckResult(
            checkLinearizable(ops, searched, {
              timeoutMs: remaining,
              diagnose: options.html !== undefined,
              ...(options.memory === undefined ? {} : { memoryBytes: options.memory }),
            }),
          ),
    );
  }
  const locks = lockCheckers(options.checker ?? []);
  const history = loaded.events ?? [];
  // Without a single resource line no lock checker has anything to judge, whatever it would say —
  // but inventory, which also judges the acknowledged buys against a starting stock (README: "init/
  // read/write or buy"), and says itself when it has nothing.
  const resourceLines = history.some((e) => e.process === RESOURCE_PROCESS);
  // The lock checkers spend from the same budget: past it each ends `unknown` (CheckBudgetError).
  const deadline = started + options.timeout;
  for (const name of locks.run) {
    checkers[name] = guard(() =>
      resourceLines || name === 'inventory'
        ? lockCheck(name, history, options, deadline)
        : nothingToCheck('the history has no resource lines', {}),
    );
  }
  const ran = await runCheckers(checkers, undefined);
  if (badInput !== undefined) throw badInput;
  const notCounted = Object.entries(ran.results)
    .filter(([name, r]) => locks.optional.has(name as LockChecker) && isNothingToCheck(r))
    .map(([name]) => name);
  const counted = Object.entries(ran.results).filter(([name]) => !notCounted.includes(name));
  // `all` with nothing to judge anywhere stays unknown: a run that checked nothing has not passed.
  const verdict = counted.length === 0 ? 'unknown' : composeVerdicts(counted.map(([, r]) => r.verdict));
  return {
    composite: { verdict, results: ran.results },
    format,
    drawn: loaded.events ?? drawnOps ?? loaded.operations,
    notCounted,
    ...(applied === undefined ? {} : { semantics: applied }),
  };
}

/**
 * Reads the file in its format. JSONL keeps its events (the lock checkers and the report need them)
 * with their lines, and pairs the client operations whichever checker runs, in `index` order whatever the
 * file order, keeping them only for a model's search: a completion before its invoke (by index) or one with
 * no invoke is a malformed history for every checker (bad input naming its line). The resource's
 * observations are never client ops.
 */
async function load(
  file: string,
  format: HistoryFormat,
  keepOperations: boolean,
  read: ReadOptions,
): Promise<Loaded> {
  switch (format) {
    case 'jsonl': {
      const events: HistoryEvent[] = [];
      const lines: number[] = [];
      for await (const [event, line] of readHistoryJsonlLines(file, file, read)) {
        events.push(event);
        lines.push(line);
      }
      // Lines may come in any file order (README, "Order"): client ops pair per process in index order.
      const order = indexOrder(file, events, lines);
      async function* clientLines(): AsyncGenerator<[HistoryEvent, number]> {
        for (let k = 0; k < events.length; k++) {
          const i = order?.[k] ?? k;
          if (events[i]!.process !== RESOURCE_PROCESS) yield [events[i]!, lines[i]!];
        }
      }
      const operations = await pairLines(file, clientLines(), {});
      // Without a model the ops were paired only to validate the history: let them go.
      return { events, lines, operations: keepOperations ? operations : [], count: events.length };
    }
    case 'edn': {
      let count = 0;
      const operations = await pairLines(file, readJepsenEdn(file, file, read), { clock: 'index' }, () => {
        count++;
      });
      return { operations, count };
    }
    case 'porcupine-log': {
      // Every line of a porcupine log is an event, as in EDN: a lone `:info` line is a history with
      // nothing to judge (unknown), not an empty file (bad input).
      let count = 0;
      const operations = await readPorcupineLog(file, file, read, () => {
        count++;
      });
      return { operations, count };
    }
  }
}

/**
 * The positions of `events` in `index` order, undefined when the file is in that order already. Two events
 * with one `index` make every tie-break on it (the resource's order at one instant, which line a checker's
 * error names) depend on the file's line order: bad input naming both lines. Harness histories number their
 * lines in order, so the check is one pass; only a file out of order is sorted.
 */
function indexOrder(
  file: string,
  events: readonly HistoryEvent[],
  lines: readonly number[],
): number[] | undefined {
  let increasing = true;
  for (let i = 1; i < events.length && increasing; i++) increasing = events[i]!.index > events[i - 1]!.index;
  if (increasing) return undefined;
  const order = events.map((_, i) => i).sort((a, b) => events[a]!.index - events[b]!.index || a - b);
  for (let k = 1; k < order.length; k++) {
    const [a, b] = [order[k - 1]!, order[k]!];
    if (events[a]!.index === events[b]!.index) {
      throw new BadInputError(
        `${file}:${lines[b]}: "index" ${events[b]!.index} is already the index of line ${lines[a]}: every event needs its own`,
      );
    }
  }
  return order;
}

function isNothingToCheck(result: CheckResult): boolean {
  return result.verdict === 'unknown' && result.nothingToCheck !== undefined;
}

/** Every requested check `unknown` for the same reason (the history could not be read in time). */
function undecided(options: CliOptions, why: string): CompositeResult {
  const results: Record<string, CheckResult> = {};
  const names = [
    ...(options.model === undefined ? [] : ['linearizability']),
    ...lockCheckers(options.checker ?? []).run,
  ];
  for (const name of names) results[name] = { verdict: 'unknown', violations: [], stats: {}, error: why };
  return { verdict: 'unknown', results };
}

/** A lock checker's error names an event by its `index`; add the file and line it was read from. */
function locate(error: Error, file: string, loaded: Loaded): Error {
  if (!(error instanceof LockHistoryError) || error.index === undefined) return error;
  const at = loaded.events?.findIndex((e) => e.index === error.index) ?? -1;
  const line = at === -1 ? undefined : loaded.lines?.[at];
  return line === undefined
    ? error
    : new BadInputError(`${file}:${line}: ${error.message}`, { cause: error });
}

function lockCheck(
  name: LockChecker,
  history: HistoryEvent[],
  options: CliOptions,
  deadline: number,
): CheckResult {
  switch (name) {
    case 'mutex':
      return checkMutex(history, { deadline });
    case 'fence':
      return checkFences(history, { deadline });
    case 'inventory':
      return checkInventory(
        history,
        options.initialStock === undefined ? { deadline } : { initialStock: options.initialStock, deadline },
      );
    case 'cron':
      return checkCron(history, { deadline });
    case 'election':
      return checkElection(history, { deadline });
    case 'semaphore':
      return checkSemaphore(history, { deadline });
    case 'rwlock':
      // Whether the resource refused stale fences is not in the history: every overlap is judged.
      return checkReadWriteLock(history, { deadline });
  }
}

/** The linearizability result seen as a CheckResult: illegal partitions are its violations. */
export function asCheckResult(result: LinearizabilityResult): CheckResult & LinearizabilityResult {
  const violations = result.partitions
    .filter((p) => p.verdict === 'illegal')
    .map((p) => ({
      kind: 'not-linearizable',
      key: p.key,
      message: p.witness?.conviction ?? `${p.witness?.unplaced.length ?? 0} operations could not be placed`,
    }));
  const undecided = result.partitions.filter((p) => p.verdict === 'unknown');
  const error =
    undecided.length === 0
      ? undefined
      : `${undecided.length} partition(s) undecided: ${undecided
          .slice(0, UNDECIDED_SHOWN)
          .map((p) => `${p.key ?? 'history'} (${p.reason ?? 'unknown'})`)
          .join(', ')}${
          undecided.length > UNDECIDED_SHOWN
            ? `, … and ${undecided.length - UNDECIDED_SHOWN} more (partitions[] in --json has every one)`
            : ''
        }`;
  return { ...result, violations, ...(error === undefined ? {} : { error }) };
}

/** Undecided partitions named in the error line; 100 000 keys made it a 1.7 MB line. */
const UNDECIDED_SHOWN = 20;

/** Errors that mean the input could not be checked at all (exit code 3), as opposed to a verdict. */
export function isBadInput(error: unknown): error is Error {
  return (
    error instanceof BadInputError ||
    error instanceof HistoryParseError ||
    error instanceof HistoryReadError ||
    error instanceof HistoryShapeError ||
    error instanceof LockHistoryError
  );
}
