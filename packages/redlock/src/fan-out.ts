import type { NodeOutcome } from '@fencekit/core';
import { errorMessage, type LockNode, lastConnectionError } from '@fencekit/redis/internal';

/** What one node did with one request sent to all of them. */
export type NodeResult<T> =
  | { readonly node: LockNode; readonly answered: true; readonly value: T }
  | { readonly node: LockNode; readonly answered: false; readonly reason: string };

/** Stop waiting once this many answers satisfy `agreed` (a quorum granted): the rest cannot matter. */
export interface EnoughAnswers<T> {
  readonly count: number;
  agreed(value: T): boolean;
}

/**
 * Sends `request` to every node at once and collects each answer, or why there was none. Each node
 * gets at most `timeoutMs` (much shorter than the lease TTL, so a dead node cannot eat the validity);
 * a node whose connection is down fails at once instead of queueing the command. With `enough`, it
 * returns as soon as that many nodes agreed, without waiting for the slowest: those nodes show as
 * unanswered, and their requests still complete (or time out) on their own.
 */
export function fanOut<T>(
  nodes: readonly LockNode[],
  timeoutMs: number,
  request: (node: LockNode) => Promise<T>,
  enough?: EnoughAnswers<T>,
  /**
   * Called when the answer is returned while some requests are still in flight (a quorum agreed
   * first, or the timeout passed), with a promise that resolves once every request has settled. Not
   * called when all of them had settled already: the common case pays for no extra promise.
   */
  onAllSettled?: (all: Promise<void>) => void,
): Promise<NodeResult<T>[]> {
  return new Promise((resolve) => {
    const results: (NodeResult<T> | undefined)[] = nodes.map(() => undefined);
    let settled = 0;
    let agreed = 0;
    let done = false;
    // Requests whose promise settled, unlike `settled`, which also counts nodes given up on.
    let completed = 0;
    let allCompleted: (() => void) | undefined;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (onAllSettled !== undefined && completed < nodes.length) {
        onAllSettled(
          new Promise<void>((resolveAll) => {
            allCompleted = resolveAll;
          }),
        );
      }
      resolve(
        results.map(
          (r, i) =>
            r ?? {
              node: nodes[i] as LockNode,
              answered: false,
              reason: 'no answer yet when a quorum had agreed',
            },
        ),
      );
    };
    const settle = (index: number, result: NodeResult<T>): void => {
      if (done || results[index] !== undefined) return;
      results[index] = result;
      settled += 1;
      if (result.answered && enough?.agreed(result.value)) agreed += 1;
      if (settled === nodes.length || (enough !== undefined && agreed >= enough.count)) finish();
    };
    // Timers run before socket reads in each turn of the event loop: after a stall (a busy or
    // starved process) the timer would win against answers already waiting in the socket. One
    // setImmediate lets those answers be read first, so only a node that truly did not answer
    // counts as timed out.
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          for (const [i, node] of nodes.entries()) {
            settle(i, { node, answered: false, reason: `no answer within ${timeoutMs} ms` });
          }
        }),
      timeoutMs,
    );
    const complete = (): void => {
      completed += 1;
      if (completed === nodes.length) allCompleted?.();
    };
    for (const [i, node] of nodes.entries()) {
      request(node).then(
        (value) => {
          complete();
          settle(i, { node, answered: true, value });
        },
        (error: unknown) => {
          complete();
          settle(i, { node, answered: false, reason: failureReason(node, error) });
        },
      );
    }
  });
}

/** Why a node's request failed, in words an operator can act on. */
function failureReason(node: LockNode, error: unknown): string {
  if (error instanceof Error && error.message.startsWith("Stream isn't writeable")) {
    const last = lastConnectionError(node.redis);
    return `not connected (${node.redis.status}${last === undefined ? '' : `; last error: ${last}`})`;
  }
  return errorMessage(error);
}

/** The per-node outcomes a `QuorumError` lists: who agreed, and why each other node did not. */
export function outcomesOf<T>(
  results: readonly NodeResult<T>[],
  agreed: (value: T) => boolean,
  refusal: string,
): NodeOutcome[] {
  return results.map((result) => {
    if (!result.answered) return { node: result.node.name, ok: false, reason: result.reason };
    return agreed(result.value)
      ? { node: result.node.name, ok: true }
      : { node: result.node.name, ok: false, reason: refusal };
  });
}
