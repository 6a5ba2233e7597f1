import { HistoryParseError, HistoryShapeError } from '../history/errors.js';
import { readHistoryJsonl } from '../history/jsonl.js';
import { formatFromPath, type HistoryFormat, loadOperations } from '../history/load.js';
import type { HistoryEvent, Operation } from '../history/types.js';
import { checkLinearizable, type LinearizabilityResult } from '../linearizability/index.js';
import { checkCron } from '../lock/cron.js';
import { checkElection } from '../lock/election.js';
import { LockHistoryError } from '../lock/errors.js';
import { RESOURCE_PROCESS } from '../lock/events.js';
import { checkFences } from '../lock/fence.js';
import { checkInventory } from '../lock/inventory.js';
import { checkMutex } from '../lock/mutex.js';
import { modelByName } from '../models/registry.js';
import { type Checker, type CheckResult, type CompositeResult, runCheckers } from '../verdict.js';
import { type CliOptions, FORMATS, type LockChecker } from './arguments.js';

/** A bad flag or file: reported on stderr with exit code 3, never as a verdict. */
export class BadInputError extends Error {}

/** What one run checked, for the report and the exit code. */
export interface Outcome {
  composite: CompositeResult;
  format: HistoryFormat;
  /** What the HTML report draws: the events (lock lanes and timelines) or the paired operations. */
  drawn: readonly HistoryEvent[] | readonly Operation[];
}

/** Loads the history and runs every check the flags ask for; bad input throws, verdicts never do. */
export async function check(file: string, options: CliOptions): Promise<Outcome> {
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
  let events: HistoryEvent[] | undefined;
  let operations: readonly HistoryEvent[] | readonly Operation[];
  if (format === 'jsonl') {
    events = await readEvents(file);
    // The resource's observations are not client operations: the linearizability search never sees them.
    operations = events.filter((e) => e.process !== RESOURCE_PROCESS);
  } else {
    operations = await loadOperations(file, format).catch(rethrowMissing(file));
  }

  const checkers: Record<string, Checker<undefined>> = {};
  let badInput: Error | undefined;
  // Bad input must end as exit code 3, not be folded into `unknown` by runCheckers.
  const guard =
    (fn: () => CheckResult): Checker<undefined> =>
    () => {
      try {
        return fn();
      } catch (error) {
        if (isBadInput(error)) badInput ??= error;
        throw error;
      }
    };
  if (options.model !== undefined) {
    const model = modelByName(options.model);
    if (model === undefined) throw new BadInputError(`unknown model ${options.model}`);
    const lin = operations;
    checkers.linearizability = guard(() =>
      asCheckResult(
        checkLinearizable(lin, model, {
          timeoutMs: options.timeout,
          diagnose: options.html !== undefined,
          ...(options.memory === undefined ? {} : { memoryBytes: options.memory }),
        }),
      ),
    );
  }
  for (const name of options.checker ?? []) {
    const history = events ?? [];
    checkers[name] = guard(() => lockCheck(name, history, options));
  }
  const composite = await runCheckers(checkers, undefined);
  if (badInput !== undefined) throw badInput;
  return { composite, format, drawn: events ?? operations };
}

function lockCheck(name: LockChecker, history: HistoryEvent[], options: CliOptions): CheckResult {
  switch (name) {
    case 'mutex':
      return checkMutex(history);
    case 'fence':
      return checkFences(history);
    case 'inventory':
      return checkInventory(
        history,
        options.initialStock === undefined ? {} : { initialStock: options.initialStock },
      );
    case 'cron':
      return checkCron(history);
    case 'election':
      return checkElection(history);
  }
}

/** The linearizability result seen as a CheckResult: illegal partitions are its violations. */
function asCheckResult(result: LinearizabilityResult): CheckResult & LinearizabilityResult {
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
      : `${undecided.length} partition(s) undecided: ${undecided.map((p) => `${p.key ?? 'history'} (${p.reason ?? 'unknown'})`).join(', ')}`;
  return { ...result, violations, ...(error === undefined ? {} : { error }) };
}

async function readEvents(file: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  try {
    for await (const event of readHistoryJsonl(file)) events.push(event);
  } catch (error) {
    rethrowMissing(file)(error);
  }
  return events;
}

function rethrowMissing(file: string): (error: unknown) => never {
  return (error) => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES') {
      throw new BadInputError(`cannot read ${file}: ${(error as Error).message}`);
    }
    throw error;
  };
}

/** Errors that mean the input could not be checked at all (exit code 3), as opposed to a verdict. */
export function isBadInput(error: unknown): error is Error {
  return (
    error instanceof BadInputError ||
    error instanceof HistoryParseError ||
    error instanceof HistoryShapeError ||
    error instanceof LockHistoryError
  );
}
