import type { Verdict } from './history/types.js';

/**
 * What every checker returns: a verdict, the violations that justify an `illegal` verdict (empty
 * otherwise), and figures about what was checked. `error` says why a verdict is `unknown` when the
 * check could not be carried out (it crashed, ran out of budget, or lacked something it needs);
 * `nothingToCheck` says why, when the history holds nothing this checker judges (see below).
 */
export interface CheckResult<V = unknown, S = unknown> {
  verdict: Verdict;
  violations: V[];
  stats: S;
  error?: string;
  nothingToCheck?: string;
}

/**
 * The one way a checker says "this history gives me nothing to judge" (a mutex-only history handed
 * to the election checker, a run that recorded no resource line): verdict `unknown`, never `ok` —
 * a check that looked at nothing has not passed anything — with `nothingToCheck` naming what was
 * missing, e.g. `'no resource "claim" lines'`. No violations; `stats` as the checker counted them.
 * `error` repeats it as `nothing to check: <why>`, so readers that only show `error` still say why.
 */
export function nothingToCheck<S>(
  why: string,
  stats: S,
): CheckResult<never, S> & { nothingToCheck: string; error: string } {
  return {
    verdict: 'unknown',
    violations: [],
    stats,
    nothingToCheck: why,
    error: `nothing to check: ${why}`,
  };
}

/** A named check over some input (a history, usually). May be sync or async; may throw. */
export type Checker<H = unknown> = (history: H) => CheckResult | Promise<CheckResult>;

/** Results of several checkers and the verdict they add up to. */
export interface CompositeResult {
  verdict: Verdict;
  results: Record<string, CheckResult>;
}

const RANK: Record<Verdict, number> = { ok: 0, unknown: 1, illegal: 2 };

/** Jepsen's order: one `illegal` convicts; otherwise one `unknown` leaves it open; `ok` only if all are. */
export function composeVerdicts(verdicts: Iterable<Verdict>): Verdict {
  let worst: Verdict = 'ok';
  for (const v of verdicts) if (RANK[v] > RANK[worst]) worst = v;
  return worst;
}

export function isVerdict(value: unknown): value is Verdict {
  return value === 'ok' || value === 'illegal' || value === 'unknown';
}

/**
 * Runs each checker on `history` (one after another) and composes their verdicts. A checker that
 * throws, rejects or returns something without a valid verdict yields `unknown` with the error — a
 * crashed check must never read as a pass.
 */
export async function runCheckers<H>(
  checkers: Record<string, Checker<H>>,
  history?: H,
): Promise<CompositeResult> {
  const results: Record<string, CheckResult> = {};
  for (const [name, check] of Object.entries(checkers)) {
    results[name] = await settle(() => check(history as H));
  }
  return { verdict: composeVerdicts(Object.values(results).map((r) => r.verdict)), results };
}

async function settle(run: () => CheckResult | Promise<CheckResult>): Promise<CheckResult> {
  try {
    const result: unknown = await run();
    if (typeof result !== 'object' || result === null || !isVerdict((result as CheckResult).verdict)) {
      return crashed(`checker returned no valid verdict (got ${describe(result)})`);
    }
    return result as CheckResult;
  } catch (error) {
    return crashed(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
}

function crashed(error: string): CheckResult {
  return { verdict: 'unknown', violations: [], stats: {}, error };
}

function describe(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  const verdict = (value as { verdict?: unknown }).verdict;
  return `an object with verdict ${JSON.stringify(verdict) ?? 'undefined'}`;
}
