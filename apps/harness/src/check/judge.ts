import type { Checker, CheckResult, HistoryEvent } from '@fencekit/checker';

export type History = readonly HistoryEvent[];

/** A typed check as a run's `Checker`: its stats widened to the plain record results.json stores. */
export const judge =
  <V, S>(check: (history: History) => CheckResult<V, S>): Checker<History> =>
  (history) => {
    const result = check(history);
    return { ...result, stats: result.stats as unknown as Record<string, unknown> };
  };
