import { describe, expect, it } from 'vitest';
import { EffectProbes, type EffectSources, type RequestedFaults } from '../src/faults/effects.js';
import type { LocalRecipe } from '../src/local/recipe.js';
import type { ClusterNode } from '../src/types.js';

/**
 * The clock probe's phases (#20): a `started` look that the heal fell inside must not count the heal's own step
 * back (a clock "running at -1.5x") as the fault's effect; a started look with no fault in force sees nothing;
 * nothing read after the phase's end (`cutOff`) counts. The server's wall clock here is a function of ours, with
 * the fault (a jump or a drift) in force until `healAt` (Date.now()), when it steps back onto ours.
 */
function scripted(fault: { offsetMs: number; rate: number }, healAt: number) {
  const since = Date.now();
  const inForce = () => Date.now() < healAt;
  const recipe = {
    readClock: async () => {
      const now = Date.now();
      return { ms: inForce() ? now + fault.offsetMs + (now - since) * (fault.rate - 1) : now, wall: true };
    },
  } as unknown as LocalRecipe;
  const node = { id: 'n1' } as ClusterNode;
  const sources = {
    recipe,
    members: [node],
    node: () => node,
    probeTarget: () => ({ host: '127.0.0.1', port: 1 }),
    processState: async () => 'S',
  } as unknown as EffectSources<ClusterNode>;
  const asked = { offsetMs: fault.offsetMs, rate: fault.rate };
  const requested: RequestedFaults = {
    latencyMs: () => undefined,
    clock: () => (inForce() ? asked : undefined),
  };
  return new EffectProbes(sources, requested);
}

const started = (timeoutMs: number, cutOff?: AbortSignal) =>
  ({ fault: 'clock', node: 'n1', phase: 'started', timeoutMs, ...(cutOff ? { cutOff } : {}) }) as const;

describe('the clock probe around the heal', () => {
  it("does not count the heal's step back inside a started look as the jump's effect", async () => {
    // Healed 200 ms into the first look's 400 ms window: its two readings straddle the step back.
    const seen = await scripted({ offsetMs: 1_000, rate: 1 }, Date.now() + 200).observe(started(1_500));
    expect(seen.seen, seen.detail).toBe(false);
  });

  it('does not see a fault with none in force, however the clock reads', async () => {
    const seen = await scripted({ offsetMs: 1_000, rate: 1 }, 0).observe(started(1_000));
    expect(seen.seen, seen.detail).toBe(false);
    expect(seen.detail).toMatch(/no clock fault in force/);
  });

  it('sees a 3x drift near 3x and a jump at the asked lead', async () => {
    const drift = await scripted({ offsetMs: 0, rate: 3 }, Date.now() + 60_000).observe(started(3_000));
    expect(drift.seen, drift.detail).toBe(true);
    const rate = Number(/runs at (-?[\d.]+)x/.exec(drift.detail)?.[1]);
    expect(rate).toBeGreaterThan(2.1);
    expect(rate).toBeLessThan(3.9);
    const jump = await scripted({ offsetMs: 1_000, rate: 1 }, Date.now() + 60_000).observe(started(3_000));
    expect(jump.seen, jump.detail).toBe(true);
    const lead = Number(/(-?\d+) ms ahead/.exec(jump.detail)?.[1]);
    expect(Math.abs(lead - 1_000)).toBeLessThan(500);
  });

  it('counts nothing read after the phase was cut off', async () => {
    // The fault stays in force; the phase ends 100 ms in, inside the first look.
    const end = new AbortController();
    setTimeout(() => end.abort(), 100);
    const seen = await scripted({ offsetMs: 1_000, rate: 1 }, Date.now() + 60_000).observe(
      started(3_000, end.signal),
    );
    expect(seen.seen, seen.detail).toBe(false);
    expect(seen.detail).toMatch(/cut off/);
  });
});
