/**
 * A lock checker's time budget. The checkers run synchronously, so a timer cannot stop them: they
 * call `tick()` in their loops, and every 4096 ticks it compares the clock with the deadline and throws
 * `CheckBudgetError` once it has passed. `runCheckers` turns that into `unknown`, as the
 * linearizability search ends when its budget runs out: a check cut short has proved nothing.
 */
export class CheckBudgetError extends Error {
  override get name(): string {
    return 'CheckBudgetError';
  }
}

/** Ticks between clock reads: cheap enough for million-event loops, fine-grained enough to stop soon. */
const STEP = 4096;

export class StepBudget {
  #left = STEP;
  /** `deadline` in performance.now() milliseconds; undefined means no limit. */
  constructor(readonly deadline: number | undefined) {}

  tick(): void {
    if (--this.#left > 0) return;
    this.#left = STEP;
    if (this.deadline !== undefined && performance.now() >= this.deadline) {
      throw new CheckBudgetError('the check ran out of its time budget (--timeout) before it finished');
    }
  }
}

/** What every lock checker accepts to bound its running time. */
export interface BudgetOptions {
  /** performance.now() time (ms) by which the check must end; past it the check ends `unknown`. */
  deadline?: number;
}
