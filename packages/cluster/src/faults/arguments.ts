import { InvalidArgumentError } from '@fencekit/core';
import { validateToxic } from '../proxy/toxics.js';
import type { ClockOptions, LatencyOptions, Toxic } from '../types.js';

/**
 * Argument checks for the nemesis calls, shared by both providers so a bad call fails the same way (and before
 * anything is touched) whether the servers are processes or containers.
 */

export function checkNodeId(id: unknown): asserts id is string {
  if (typeof id !== 'string') throw new InvalidArgumentError('node id', id, "a node id such as 'n1'");
}

/** `latency(id, { ms, jitterMs?, direction? })` is shorthand for a Toxiproxy-style latency toxic. */
export function latencyToxic(options: LatencyOptions): Toxic {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('latency options', options, '{ ms, jitterMs?, direction? }');
  }
  return validateToxic({
    type: 'latency',
    latencyMs: options.ms,
    jitterMs: options.jitterMs ?? 0,
    direction: options.direction ?? 'both',
  });
}

/** The skew a clock fault asks for, with `rate` defaulting to 1 (a jump without drift). */
export function clockSkew(options: ClockOptions): { offsetMs: number; rate: number } {
  const { offsetMs, rate = 1 } = options ?? ({} as ClockOptions);
  if (typeof offsetMs !== 'number' || !Number.isFinite(offsetMs)) {
    throw new InvalidArgumentError('clock.offsetMs', offsetMs, 'a finite number of milliseconds');
  }
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
    throw new InvalidArgumentError('clock.rate', rate, 'a positive finite number');
  }
  return { offsetMs, rate };
}
