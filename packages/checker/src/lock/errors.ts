import { showValue } from '../history/show.js';

/**
 * A lock history that cannot be checked as given: names the event (its `index`) and what was expected.
 * The CLI maps it to exit code 3 (bad input); `runCheckers` maps it to `unknown`.
 */
export class LockHistoryError extends Error {
  readonly code = 'bad-history';
  constructor(
    readonly index: number | undefined,
    readonly expected: string,
    readonly received?: unknown,
  ) {
    super(
      `${index === undefined ? 'Lock history' : `Event ${index}`}: expected ${expected}` +
        (received === undefined ? '' : `, got ${showValue(received)}`),
    );
  }

  override get name(): string {
    return 'LockHistoryError';
  }
}
