import { describe, expect, it } from 'vitest';
// The probes themselves (not exported by the package): their loop is what the nemesis cuts off.
import {
  EffectProbes,
  type EffectSources,
  type RequestedFaults,
} from '../../../packages/cluster/src/faults/effects.js';
import type { Deployment } from '../src/backends/types.js';
import type { NemesisContext } from '../src/nemesis/nemesis.js';
import { runSchedule } from '../src/nemesis/nemesis.js';
import { sleep } from '../src/workloads/util.js';

/**
 * #20: a fault's start probe is cut off at the heal: nothing it reads after the heal began counts as the fault's
 * effect. Here the scripted server shows a kill only once it is being restarted (the fault itself did nothing),
 * and each probe look takes 150 ms, so the look in progress at the heal reads the server after it: on the old
 * nemesis that look saw the "kill" and recorded it seen, after the fault's window.
 */
describe('the start probe of a server fault', () => {
  it('counts nothing read after the heal began', async () => {
    let restarting = false;
    let healAt = 0;
    const node = { id: 'n1', endpoint: '127.0.0.1:1', directEndpoint: '127.0.0.1:1' };
    const sources = {
      recipe: { ready: async () => !restarting },
      members: [node],
      node: () => node,
      probeTarget: () => ({ id: 'n1', host: '127.0.0.1', port: 1 }),
      processState: async () => {
        await sleep(150);
        return restarting ? undefined : 'S';
      },
    } as unknown as EffectSources<typeof node>;
    const requested: RequestedFaults = { latencyMs: () => undefined, clock: () => undefined };
    const probes = new EffectProbes(sources, requested);
    const deployment = {
      nodes: ['n1'],
      faults: {
        kill: async () => {},
        restart: async () => {
          healAt = performance.now();
          restarting = true;
          await sleep(400);
          restarting = false;
        },
        heal: async () => {},
        observe: (query: Parameters<typeof probes.observe>[0]) => probes.observe(query),
      },
    } as unknown as Deployment;
    const startedAt = performance.now();
    const context: NemesisContext = {
      deployment,
      ttlMs: 200,
      sessionMs: 200,
      seed: 1,
      nextWindow: async () => undefined,
      nextEvent: async () => undefined,
      record: () => {},
      progress: () => {},
      signal: new AbortController().signal,
      startedAt,
      applied: 0,
    };
    const [summary] = await runSchedule(context, [{ atMs: 0, fault: 'kill', durationMs: 500 }]);
    expect(summary?.applied).toBe(true);
    const started = summary?.observed?.started;
    expect(started?.seen, started?.detail).toBe(false);
    // A look in flight when the heal began finishes after it (its 150 ms reading), so a "not seen" may be
    // stamped a little after the heal; what must never happen is a sighting read after it. (Asserting the
    // stamp of a "not seen" too failed 1 in 3 on a loaded machine: 651 ms against 508.)
    if (started?.seen) expect(started.atMs).toBeLessThanOrEqual(Math.ceil(healAt - startedAt) + 5);
  }, 30_000);
});
