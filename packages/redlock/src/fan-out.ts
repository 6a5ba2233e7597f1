import type { NodeOutcome } from '@fencekit/core';
import { errorMessage, type LockNode } from '@fencekit/redis';

/** What one node did with one request sent to all of them. */
export type NodeResult<T> =
  | { readonly node: LockNode; readonly answered: true; readonly value: T }
  | { readonly node: LockNode; readonly answered: false; readonly reason: string };

const TIMED_OUT = Symbol('timed out');

/**
 * Sends `request` to every node at once and collects each answer, or why there was none. Each node
 * gets at most `timeoutMs` (much shorter than the lease TTL, so a dead node cannot eat the validity);
 * a node whose connection is down fails at once instead of queueing the command.
 */
export async function fanOut<T>(
  nodes: readonly LockNode[],
  timeoutMs: number,
  request: (node: LockNode) => Promise<T>,
): Promise<NodeResult<T>[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    // Timers run before socket reads in each turn of the event loop: after a stall (a busy or
    // starved process) the timer would win against answers already waiting in the socket. One
    // setImmediate lets those answers be read first, so only a node that truly did not answer
    // counts as timed out.
    timer = setTimeout(() => setImmediate(() => resolve(TIMED_OUT)), timeoutMs);
  });
  try {
    return await Promise.all(
      nodes.map(async (node): Promise<NodeResult<T>> => {
        try {
          const value = await Promise.race([request(node), timeout]);
          if (value === TIMED_OUT) {
            return { node, answered: false, reason: `no answer within ${timeoutMs} ms` };
          }
          return { node, answered: true, value };
        } catch (error) {
          return { node, answered: false, reason: errorMessage(error) };
        }
      }),
    );
  } finally {
    clearTimeout(timer);
  }
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
