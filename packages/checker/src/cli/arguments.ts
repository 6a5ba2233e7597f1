import { InvalidArgumentError } from 'commander';
import type { HistoryFormat } from '../history/load.js';

/** The lock checks the CLI can run, by name. */
export const LOCK_CHECKERS = ['mutex', 'fence', 'inventory', 'cron', 'election'] as const;
export type LockChecker = (typeof LOCK_CHECKERS)[number];
export const FORMATS: HistoryFormat[] = ['jsonl', 'edn', 'porcupine-log'];

/** The parsed flags of `fencekit-check`. */
export interface CliOptions {
  model?: string;
  checker?: LockChecker[];
  format?: HistoryFormat;
  timeout: number;
  memory?: number;
  html?: string;
  json?: boolean;
  initialStock?: number;
}

export function parseCheckers(value: string, previous: LockChecker[] | undefined): LockChecker[] {
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

export function parseInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer.');
  return n;
}
