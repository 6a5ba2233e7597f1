import { settleWithin } from '@fencekit/core';
import type { ClientBackend } from '../backends/types.js';
import type { ClientConfig } from '../workloads/types.js';
import { documentedBounds } from './bounds.js';
import { type OpRecorder, ok } from './recorder.js';

/**
 * How long past its bound a `close()` may run before the client records it as still pending. More than
 * the bounds check's slack (1 s in the harness), so a close recorded this way is always convicted.
 */
const OVERRUN_MS = 2_000;

/**
 * Closes the backend client as one recorded `close` op whose invoke carries its documented bound. A
 * close still pending `OVERRUN_MS` past that bound is recorded as `info` at that moment (the history
 * must say so before the coordinator gives up on this process), and is then awaited to its end.
 */
export async function recordClose(
  recorder: OpRecorder,
  backend: ClientBackend,
  config: ClientConfig,
  /** The client's own stalls until now (stalls.ts), carried on the close op's invoke for the checks. */
  stalls?: { stalls: [number, number][]; longestMs: number },
): Promise<void> {
  const boundMs = documentedBounds(config.backend, config.ttlMs, config.sessionMs).closeMs;
  const closing = backend.close();
  // Whatever the outcome, the close is awaited below; a rejection is recorded, never thrown.
  closing.catch(() => undefined);
  const measured = stalls ? { stalls: stalls.stalls, longestStallMs: stalls.longestMs } : {};
  await recorder.op('close', { boundMs, ...measured }, async () => {
    if (!(await settleWithin(closing, boundMs + OVERRUN_MS))) {
      return {
        type: 'info',
        value: { pendingMs: boundMs + OVERRUN_MS },
        error: `close() still pending ${boundMs + OVERRUN_MS} ms after it began`,
      };
    }
    await closing;
    return ok();
  });
  await closing.catch(() => undefined);
}
