import { describe, expect, it } from 'vitest';
import { EffectProbes, type EffectSources, type RequestedFaults } from '../src/faults/effects.js';
import type { LocalRecipe } from '../src/local/recipe.js';
import type { ClusterNode } from '../src/types.js';

/**
 * The clock probe for a drift of a few per mille (the harness's `drift-majority`, 0.8 %): the 400 ms
 * window and 30 % tolerance of the jump/drift probe would call any rate near 1 "drifted", so a small
 * drift is measured over a longer window and must show as such, while a clock that was not skewed at
 * all is not seen as drifted. The server's clock here is a function of ours; round trips are sub-ms.
 */
function probesFor(serverRate: number, askedRate: number) {
  const started = performance.now();
  const recipe = {
    readClock: async () => ({ ms: 1_000_000 + (performance.now() - started) * serverRate, wall: true }),
  } as unknown as LocalRecipe;
  const node = { id: 'n1' } as ClusterNode;
  const sources = {
    recipe,
    members: [node],
    node: () => node,
    probeTarget: () => ({ host: '127.0.0.1', port: 1 }),
    processState: async () => 'S',
  } as unknown as EffectSources<ClusterNode>;
  const requested: RequestedFaults = {
    latencyMs: () => undefined,
    clock: () => ({ offsetMs: 0, rate: askedRate }),
  };
  return new EffectProbes(sources, requested);
}

describe('the clock probe of a small drift', () => {
  it('sees a server clock running 0.8 % fast when that was asked', async () => {
    const seen = await probesFor(1.008, 1.008).observe({
      fault: 'clock',
      node: 'n1',
      phase: 'started',
      timeoutMs: 4_000,
    });
    expect(seen.seen, seen.detail).toBe(true);
    expect(seen.detail).toMatch(/asked 1.008x/);
  });

  it('does not see it when the server clock runs at real speed', async () => {
    const seen = await probesFor(1, 1.008).observe({
      fault: 'clock',
      node: 'n1',
      phase: 'started',
      timeoutMs: 2_000,
    });
    expect(seen.seen, seen.detail).toBe(false);
  });
});
