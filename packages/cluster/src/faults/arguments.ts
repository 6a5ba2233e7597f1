import { InvalidArgumentError } from '@fencekit/core';
import { validateToxic } from '../proxy/toxics.js';
import type { ClockOptions, LatencyOptions, Toxic } from '../types.js';
import type { EffectQuery } from './effects.js';

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

const OBSERVABLE = ['kill', 'pause', 'partition', 'cutClients', 'latency', 'clock'];

/** An effect query names an observable fault, a phase, a node (all but partition) and a sane bound. */
export function checkEffectQuery(query: EffectQuery): void {
  if (typeof query !== 'object' || query === null || !OBSERVABLE.includes(query.fault)) {
    throw new InvalidArgumentError('observe.fault', query?.fault, `one of ${OBSERVABLE.join(', ')}`);
  }
  if (query.phase !== 'started' && query.phase !== 'healed') {
    throw new InvalidArgumentError('observe.phase', query.phase, "'started' or 'healed'");
  }
  if (query.fault !== 'partition' || query.node !== undefined) checkNodeId(query.node);
  const { timeoutMs = 5_000 } = query;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 600_000) {
    throw new InvalidArgumentError(
      'observe.timeoutMs',
      timeoutMs,
      'a positive number of milliseconds, at most 10 minutes',
    );
  }
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
