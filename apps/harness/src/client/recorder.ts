import { isFencekitError } from '@fencekit/core';
import { nowNs } from '../history/clock.js';
import type { EventPipe } from '../run/event-pipe.js';

export interface Outcome {
  type: 'ok' | 'fail' | 'info';
  value: unknown;
  error?: string;
}

export const ok = (value: unknown = null): Outcome => ({ type: 'ok', value });
export const fail = (value: unknown, error?: string): Outcome => ({
  type: 'fail',
  value,
  ...(error ? { error } : {}),
});

/**
 * Records a client's operations as invoke → ok/fail/info. An error is a `fail` only when it proves
 * the op did not take effect; anything else (a timeout, an indeterminate grant, a broken connection)
 * is `info`, and — as in Jepsen — the client then continues under a fresh process id, because the
 * old one may still have an op in flight.
 */
export class OpRecorder {
  #process: number;
  readonly #clients: number;
  readonly #pipe: EventPipe;

  constructor(index: number, clients: number, pipe: EventPipe) {
    this.#process = index;
    this.#clients = clients;
    this.#pipe = pipe;
  }

  get process(): number {
    return this.#process;
  }

  /**
   * Records `f` around `body`. What `body` passes to `note` (facts it learnt on the way, such as a lease
   * observation) is merged into the completion's value whatever the outcome, a thrown error included.
   */
  async op(
    f: string,
    input: unknown,
    body: (note: (facts: Record<string, unknown>) => void) => Promise<Outcome>,
  ): Promise<Outcome> {
    const process = this.#process;
    this.#pipe.push({ time: nowNs(), process, type: 'invoke', f, value: input });
    let notes: Record<string, unknown> | undefined;
    const note = (facts: Record<string, unknown>) => {
      notes = { ...notes, ...facts };
    };
    let outcome: Outcome;
    try {
      outcome = await body(note);
    } catch (error) {
      outcome = classify(error);
    }
    const value = notes === undefined ? outcome.value : withNotes(outcome.value, notes);
    const event = { time: nowNs(), process, type: outcome.type, f, value };
    this.#pipe.push(outcome.error ? { ...event, error: outcome.error } : event);
    if (outcome.type === 'info') this.#process += this.#clients;
    return outcome;
  }
}

function withNotes(value: unknown, notes: Record<string, unknown>): unknown {
  if (value === null || value === undefined) return notes;
  if (typeof value === 'object' && !Array.isArray(value)) return { ...value, ...notes };
  return { result: value, ...notes };
}

/** Errors that prove the operation did not happen. */
const DEFINITE = new Set([
  'timeout',
  'quorum',
  'backend-unavailable',
  'not-holder',
  'lost',
  'aborted',
  'closed',
]);

export function classify(error: unknown): Outcome {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (isFencekitError(error) && DEFINITE.has(error.code)) {
    return { type: 'fail', value: { code: error.code }, error: message };
  }
  if (isFencekitError(error, 'invalid-argument')) throw error;
  return { type: 'info', value: null, error: message };
}
