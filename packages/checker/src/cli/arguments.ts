import { InvalidArgumentError } from 'commander';
import type { HistoryFormat } from '../history/load.js';
import type { IndependentMode, SemanticsName } from '../models/semantics.js';
import { parseDuration as parseDurationText, parseSize as parseSizeText, UnitSyntaxError } from '../units.js';

/** The lock checks the CLI can run, by name. */
export const LOCK_CHECKERS = [
  'mutex',
  'fence',
  'inventory',
  'cron',
  'election',
  'semaphore',
  'rwlock',
] as const;
export type LockChecker = (typeof LOCK_CHECKERS)[number];
export const FORMATS: HistoryFormat[] = ['jsonl', 'edn', 'porcupine-log'];

/** `--checker` as given: lock checkers by name, and `all` for every one that finds something to judge. */
export type CheckerChoice = LockChecker | 'all';

/** The parsed flags of `fencekit-check`. */
export interface CliOptions {
  model?: string;
  checker?: CheckerChoice[];
  format?: HistoryFormat;
  timeout: number;
  memory?: number;
  html?: string;
  json?: boolean;
  initialStock?: number;
  /** How ops are read: `knossos` (EDN's default) or `strict` (JSONL's and porcupine logs'). */
  semantics?: SemanticsName;
  /** `jepsen.independent` tuples: `auto` (default), `on`, `off`. */
  independent?: IndependentMode;
  /** The registers' initial value, as EDN text (`0`, `nil`, `"a"`, `{:x 0}`). */
  initialValue?: string;
  /** Most bytes a gzipped history may decompress to. */
  maxDecompressed?: number;
}

export const SEMANTICS: SemanticsName[] = ['knossos', 'strict'];
export const INDEPENDENT_MODES: IndependentMode[] = ['auto', 'on', 'off'];

export function parseCheckers(value: string, previous: CheckerChoice[] | undefined): CheckerChoice[] {
  const names = value.split(',').map((s) => s.trim());
  const chosen = new Set(previous ?? []);
  for (const name of names) {
    if (name === 'all' || (LOCK_CHECKERS as readonly string[]).includes(name))
      chosen.add(name as CheckerChoice);
    else throw new InvalidArgumentError(`"${name}" is not one of ${LOCK_CHECKERS.join(', ')}, all.`);
  }
  return [...chosen];
}

/**
 * The lock checkers to run, and those only `all` asked for: these count toward the verdict only when
 * they found something to judge (a mutex history has no election to check), unlike a checker named.
 */
export function lockCheckers(choice: readonly CheckerChoice[]): {
  run: LockChecker[];
  optional: Set<LockChecker>;
} {
  const named = choice.filter((c): c is LockChecker => c !== 'all');
  if (!choice.includes('all')) return { run: named, optional: new Set() };
  return { run: [...LOCK_CHECKERS], optional: new Set(LOCK_CHECKERS.filter((c) => !named.includes(c))) };
}

/** `--timeout`: the shared duration syntax (../units.ts), refused the way commander reports a bad argument. */
export function parseDuration(value: string): number {
  return asArgument(() => parseDurationText(value));
}

/** `--memory`: the shared size syntax (../units.ts). */
export function parseSize(value: string): number {
  return asArgument(() => parseSizeText(value));
}

function asArgument(parse: () => number): number {
  try {
    return parse();
  } catch (error) {
    if (error instanceof UnitSyntaxError) throw new InvalidArgumentError(`${error.message}.`);
    throw error;
  }
}

/** Decimal digits only: `Number('')` and `Number(' ')` are 0, and `0x10` or `1e3` are no stock counts. */
export function parseInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError('expected a non-negative integer (decimal digits).');
  }
  return n;
}
