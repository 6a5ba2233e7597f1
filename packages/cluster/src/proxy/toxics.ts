import { InvalidArgumentError } from '@fencekit/core';
import type { Direction, Toxic } from '../types.js';
import { type LinkEffects, NO_EFFECTS } from './link.js';

const TYPES = ['latency', 'bandwidth', 'timeout', 'reset_peer', 'slow_close'] as const;

function nonNegative(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(name, value, 'a non-negative finite number');
  }
  return value;
}

/** Checks a toxic's fields; bad input throws `InvalidArgumentError` naming the field. */
export function validateToxic(toxic: Toxic): Toxic {
  if (typeof toxic !== 'object' || toxic === null || !TYPES.includes(toxic.type)) {
    throw new InvalidArgumentError(
      'toxic.type',
      (toxic as { type?: unknown } | null)?.type,
      TYPES.join(' | '),
    );
  }
  const direction = toxic.direction ?? 'both';
  if (direction !== 'upstream' && direction !== 'downstream' && direction !== 'both') {
    throw new InvalidArgumentError('toxic.direction', direction, "'upstream' | 'downstream' | 'both'");
  }
  switch (toxic.type) {
    case 'latency':
      nonNegative('toxic.latencyMs', toxic.latencyMs);
      nonNegative('toxic.jitterMs', toxic.jitterMs ?? 0);
      break;
    case 'bandwidth':
      if (nonNegative('toxic.rateKBps', toxic.rateKBps) === 0) {
        throw new InvalidArgumentError(
          'toxic.rateKBps',
          0,
          'a positive rate (use a timeout toxic to stop data)',
        );
      }
      break;
    case 'timeout':
      nonNegative('toxic.timeoutMs', toxic.timeoutMs);
      break;
    case 'reset_peer':
      nonNegative('toxic.timeoutMs', toxic.timeoutMs ?? 0);
      break;
    case 'slow_close':
      nonNegative('toxic.delayMs', toxic.delayMs);
      break;
  }
  return toxic;
}

export function appliesTo(toxic: Toxic, direction: 'upstream' | 'downstream'): boolean {
  const d: Direction = toxic.direction ?? 'both';
  return d === 'both' || d === direction;
}

/** Folds the toxics acting on one direction into the per-chunk effects a Link applies. */
export function effectsOf(toxics: readonly Toxic[], direction: 'upstream' | 'downstream'): LinkEffects {
  let effects = NO_EFFECTS;
  for (const toxic of toxics) {
    if (!appliesTo(toxic, direction)) continue;
    switch (toxic.type) {
      case 'latency':
        effects = {
          ...effects,
          latencyMs: effects.latencyMs + toxic.latencyMs,
          jitterMs: effects.jitterMs + (toxic.jitterMs ?? 0),
        };
        break;
      case 'bandwidth': {
        const rate = toxic.rateKBps * 1.024; // KB/s → bytes/ms
        effects = {
          ...effects,
          bytesPerMs: effects.bytesPerMs > 0 ? Math.min(effects.bytesPerMs, rate) : rate,
        };
        break;
      }
      case 'timeout':
        effects = { ...effects, dropping: true };
        break;
      case 'slow_close':
        effects = { ...effects, slowCloseMs: effects.slowCloseMs + toxic.delayMs };
        break;
      case 'reset_peer':
        break; // acts on whole connections, see FaultProxy
    }
  }
  return effects;
}
