#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { HistoryParseError, HistoryShapeError } from './history/errors.js';
import { readHistoryJsonl } from './history/jsonl.js';
import { formatFromPath, type HistoryFormat, loadOperations } from './history/load.js';
import type { HistoryEvent, Operation, Verdict } from './history/types.js';
import { renderHtml } from './html/render.js';
import { checkLinearizable, type LinearizabilityResult } from './linearizability/index.js';
import { checkCron } from './lock/cron.js';
import { checkElection } from './lock/election.js';
import { LockHistoryError } from './lock/errors.js';
import { RESOURCE_PROCESS } from './lock/events.js';
import { checkFences } from './lock/fence.js';
import { checkInventory } from './lock/inventory.js';
import { checkMutex } from './lock/mutex.js';
import { builtinModels, modelByName } from './models/registry.js';
import { type Checker, type CheckResult, type CompositeResult, runCheckers } from './verdict.js';

/** Exit codes: the verdict, or 3 when the input could not be checked at all. */
export const EXIT = { ok: 0, illegal: 1, unknown: 2, badInput: 3 } as const;

const LOCK_CHECKERS = ['mutex', 'fence', 'inventory', 'cron', 'election'] as const;
type LockChecker = (typeof LOCK_CHECKERS)[number];
const FORMATS: HistoryFormat[] = ['jsonl', 'edn', 'porcupine-log'];
/** Violations printed per check with `--json`; the HTML page and the API keep more. */
const JSON_VIOLATIONS = 100;

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

interface CliOptions {
  model?: string;
  checker?: LockChecker[];
  format?: HistoryFormat;
  timeout: number;
  memory?: number;
  html?: string;
  json?: boolean;
  initialStock?: number;
}

/** A bad flag or file: reported on stderr with exit code 3, never as a verdict. */
class BadInputError extends Error {}

/**
 * `fencekit-check <history> --model <m> | --checker <c,…> [options]` as a function: `argv` without the
 * node and script paths; returns the exit code (0 ok, 1 illegal, 2 unknown, 3 bad input).
 */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  const program = command(io);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; everything else commander refuses is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.badInput;
    }
    throw error;
  }
  const file = program.args[0] as string;
  const options = program.opts<CliOptions>();
  try {
    const outcome = await check(file, options);
    const verdict = outcome.composite.verdict;
    io.stdout(
      options.json
        ? `${JSON.stringify(toJson(file, options, outcome), jsonValue, 2)}\n`
        : summary(file, outcome),
    );
    if (options.html !== undefined) {
      const html = renderHtml(outcome.composite, outcome.drawn, {
        title: `fencekit-check ${file}`,
        subtitle: [
          options.model && `model ${options.model}`,
          options.checker && `checkers ${options.checker.join(', ')}`,
        ]
          .filter(Boolean)
          .join(' · '),
        timeUnit: outcome.format === 'jsonl' ? 'ns' : 'index',
      });
      await writeFile(options.html, html).catch((error: Error) => {
        throw new BadInputError(`cannot write the HTML report to ${options.html}: ${error.message}`);
      });
    }
    return EXIT[verdict];
  } catch (error) {
    if (isBadInput(error)) {
      io.stderr(`fencekit-check: ${error.message}\n`);
      return EXIT.badInput;
    }
    throw error;
  }
}

function command(io: Io): Command {
  return new Command('fencekit-check')
    .description('Check a history: linearizability against a model, and/or lock checks on a harness history.')
    .argument('<history>', 'history file (history.jsonl, Jepsen EDN, porcupine log)')
    .addOption(new Option('--model <model>', 'linearizability model').choices(Object.keys(builtinModels)))
    .option(
      '--checker <names>',
      `lock checks, comma-separated: ${LOCK_CHECKERS.join('|')}|all`,
      parseCheckers,
    )
    .addOption(
      new Option('--format <format>', 'history format (default: from the file name)').choices(FORMATS),
    )
    .option(
      '--timeout <duration>',
      'time budget for the linearizability search (e.g. 500ms, 60s, 2m)',
      parseDuration,
      60_000,
    )
    .option(
      '--memory <size>',
      'memory budget of the linearizability search (e.g. 512MiB, 1GiB); over it a partition is unknown',
      parseSize,
    )
    .option('--html <file>', 'write a self-contained HTML report')
    .option('--json', 'print results as JSON, with per-partition (per-key) verdicts')
    .option(
      '--initial-stock <n>',
      'inventory: starting stock when the history has no init event',
      parseInteger,
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run fencekit-check --help for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 illegal, 2 unknown (time or memory ran out, or a check crashed), 3 bad input.',
    );
}

interface Outcome {
  composite: CompositeResult;
  format: HistoryFormat;
  /** What the HTML report draws: the events (lock lanes and timelines) or the paired operations. */
  drawn: readonly HistoryEvent[] | readonly Operation[];
}

async function check(file: string, options: CliOptions): Promise<Outcome> {
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

function isBadInput(error: unknown): error is Error {
  return (
    error instanceof BadInputError ||
    error instanceof HistoryParseError ||
    error instanceof HistoryShapeError ||
    error instanceof LockHistoryError
  );
}

function summary(file: string, outcome: Outcome): string {
  const lines = [`${file}: ${outcome.composite.verdict}`];
  for (const [name, r] of Object.entries(outcome.composite.results)) {
    lines.push(`  ${name}: ${r.verdict}${r.error === undefined ? '' : ` (${r.error})`}`);
    const partitions = (r as Partial<LinearizabilityResult>).partitions;
    if (partitions !== undefined && partitions.length > 1) {
      const count = (v: Verdict) => partitions.filter((p) => p.verdict === v).length;
      lines.push(
        `    ${partitions.length} partitions: ${count('ok')} ok, ${count('illegal')} illegal, ${count('unknown')} unknown`,
      );
    }
    const figures = flatFigures(r.stats);
    if (figures !== '') lines.push(`    ${figures}`);
    for (const v of r.violations.slice(0, 5)) lines.push(`    - ${describeViolation(v)}`);
    if (r.violations.length > 5)
      lines.push(`    … ${r.violations.length - 5} more (--json or --html for all)`);
  }
  return `${lines.join('\n')}\n`;
}

/** `sections 120, overlaps 0, …`: the numeric stats of a check, for the human summary. */
function flatFigures(stats: unknown): string {
  if (typeof stats !== 'object' || stats === null) return '';
  return Object.entries(stats)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(2)}`)
    .join(', ');
}

function describeViolation(v: unknown): string {
  const o = v as Record<string, unknown>;
  if (typeof o.message === 'string')
    return `${String(o.kind)}${o.key ? ` [${String(o.key)}]` : ''}: ${o.message}`;
  return JSON.stringify(v, jsonValue);
}

function toJson(file: string, options: CliOptions, outcome: Outcome): unknown {
  const checks: Record<string, unknown> = {};
  for (const [name, r] of Object.entries(outcome.composite.results)) {
    const lin = r as Partial<LinearizabilityResult>;
    checks[name] = {
      verdict: r.verdict,
      ...(r.error === undefined ? {} : { error: r.error }),
      stats: r.stats,
      ...(lin.partitions === undefined
        ? {
            resources: perResource(r, outcome.drawn),
            violations: r.violations.slice(0, JSON_VIOLATIONS),
            violationCount: r.violations.length,
          }
        : {
            partitions: lin.partitions.map((p) => ({
              key: p.key ?? null,
              verdict: p.verdict,
              ...(p.reason === undefined ? {} : { reason: p.reason }),
              ops: p.opIds.length,
              steps: p.steps,
              ms: Math.round(p.ms * 100) / 100,
              ...(p.witness === undefined
                ? {}
                : {
                    prefix: p.witness.prefix.length,
                    unplaced: p.witness.unplaced.map((u) => ({
                      id: u.id,
                      op: u.description,
                      reason: u.reason,
                    })),
                    ...(p.witness.conviction === undefined ? {} : { conviction: p.witness.conviction }),
                  }),
            })),
          }),
    };
  }
  return {
    file,
    format: outcome.format,
    model: options.model ?? null,
    verdict: outcome.composite.verdict,
    checks,
  };
}

/**
 * A lock check's verdict per protected resource (the `key` of the resource's lines; "" when there is
 * one): illegal where a violation names it, otherwise the check's own verdict.
 */
function perResource(r: CheckResult, history: Outcome['drawn']): Record<string, Verdict> {
  const verdicts: Record<string, Verdict> = {};
  for (const e of history as readonly { process?: unknown; key?: string }[]) {
    if (e.process === RESOURCE_PROCESS) verdicts[e.key ?? ''] = r.verdict === 'illegal' ? 'ok' : r.verdict;
  }
  for (const v of r.violations) {
    const key = (v as { key?: unknown }).key;
    verdicts[typeof key === 'string' ? key : ''] = 'illegal';
  }
  return verdicts;
}

/** JSON has no Infinity (an open interval's end) nor bigint: write them as strings. */
function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  return value;
}

function parseCheckers(value: string, previous: LockChecker[] | undefined): LockChecker[] {
  const names = value.split(',').map((s) => s.trim());
  const chosen = new Set(previous ?? []);
  for (const name of names) {
    if (name === 'all') for (const c of LOCK_CHECKERS) chosen.add(c);
    else if ((LOCK_CHECKERS as readonly string[]).includes(name)) chosen.add(name as LockChecker);
    else throw new InvalidArgumentError(`"${name}" is not one of ${LOCK_CHECKERS.join(', ')}, all.`);
  }
  return [...chosen];
}

/** "60s", "500ms", "2m", "1.5h", or a bare number of seconds → milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (match === null) throw new InvalidArgumentError('expected a duration such as 500ms, 60s or 2m.');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  const ms = Number(match[1]) * unit;
  if (!(ms > 0)) throw new InvalidArgumentError('expected a duration above zero.');
  return ms;
}

/** "512MiB", "1GiB", "300MB", or a bare number of bytes → bytes. */
export function parseSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/i.exec(value.trim());
  if (match === null) throw new InvalidArgumentError('expected a size such as 512MiB or 1GiB.');
  const units: Record<string, number> = {
    b: 1,
    kb: 1e3,
    mb: 1e6,
    gb: 1e9,
    kib: 2 ** 10,
    mib: 2 ** 20,
    gib: 2 ** 30,
  };
  const bytes = Number(match[1]) * (units[(match[2] ?? 'b').toLowerCase()] ?? 1);
  if (!(bytes >= 1)) throw new InvalidArgumentError('expected a size of at least one byte.');
  return Math.floor(bytes);
}

function parseInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer.');
  return n;
}

const defaultIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `fencekit-check: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = EXIT.unknown;
    },
  );
}
