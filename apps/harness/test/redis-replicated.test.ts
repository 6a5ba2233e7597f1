import { describe, expect, it } from 'vitest';
import { redisBackend } from '../src/backends/redis.js';
import {
  redisClusterBackend,
  redisClusterWaitBackend,
  redisSentinelBackend,
  redisSentinelEpochBackend,
  redisSentinelWaitBackend,
  replicatedConnection,
  replicatedEndpoints,
  slotOf,
  slotZeroName,
} from '../src/backends/redis-replicated.js';
import type { Deployment } from '../src/backends/types.js';
import { OptionsError, parseRunOptions } from '../src/index.js';
import { startServerFault } from '../src/nemesis/faults.js';
import { observePhase } from '../src/nemesis/observation.js';
import { validateRun } from '../src/run/compatibility.js';
import { suiteMatrix } from '../src/suite/matrix.js';

function refusal(factory: typeof redisBackend, fault: string, fencing = true): unknown {
  const options = parseRunOptions({ backend: factory.name, workload: 'inventory', fault, fencing });
  try {
    validateRun(options, factory);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('replicated Redis backends (#17)', () => {
  it('take failover and split-brain, fenced or not', () => {
    for (const factory of [
      redisSentinelBackend,
      redisClusterBackend,
      redisSentinelEpochBackend,
      redisSentinelWaitBackend,
      redisClusterWaitBackend,
    ]) {
      expect(refusal(factory, 'failover,split-brain')).toBeUndefined();
      expect(refusal(factory, 'failover', false)).toBeUndefined();
      expect(refusal(factory, 'failover-lagged,split-brain')).toBeUndefined();
      expect(refusal(factory, 'failover-lagged', false)).toBeUndefined();
    }
    expect(parseRunOptions({ backend: 'redis-sentinel-epoch', workload: 'inventory' }).backend).toBe(
      'redis-sentinel-epoch',
    );
  });

  it('a single Redis refuses the promotion faults, saying which it supports', () => {
    for (const fault of ['failover', 'failover-lagged', 'split-brain']) {
      const error = refusal(redisBackend, fault);
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toMatch(
        new RegExp(`fault ${fault} does not apply to redis; it supports:`),
      );
    }
  });

  it('refuses faults the replicated backends do not list (aimed faults)', () => {
    const error = refusal(redisSentinelBackend, 'stall-holder');
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as Error).message).toMatch(/fault stall-holder does not apply to redis-sentinel/);
  });

  it('clients read the Sentinels and natMap back from the endpoint list', () => {
    const endpoints = [
      '127.0.0.1:7001',
      '127.0.0.1:7002',
      `sentinel=${JSON.stringify({ masterName: 'fencekit', endpoints: ['127.0.0.1:26379', '127.0.0.1:26380'] })}`,
      `natmap=${JSON.stringify({ '127.0.0.1:9001': { host: '127.0.0.1', port: 7001 } })}`,
    ];
    expect(replicatedEndpoints(endpoints).nodes).toEqual([
      { host: '127.0.0.1', port: 7001 },
      { host: '127.0.0.1', port: 7002 },
    ]);
    expect(replicatedConnection('redis-sentinel', endpoints)).toEqual({
      name: 'fencekit',
      sentinels: [
        { host: '127.0.0.1', port: 26379 },
        { host: '127.0.0.1', port: 26380 },
      ],
      natMap: { '127.0.0.1:9001': { host: '127.0.0.1', port: 7001 } },
      failoverDetector: true,
    });
    expect(replicatedConnection('redis-cluster', endpoints)).toEqual({
      cluster: [
        { host: '127.0.0.1', port: 7001 },
        { host: '127.0.0.1', port: 7002 },
      ],
      options: { natMap: { '127.0.0.1:9001': { host: '127.0.0.1', port: 7001 } } },
    });
    expect(() => replicatedConnection('redis-sentinel', ['127.0.0.1:7001'])).toThrow(/no Sentinels/);
  });

  it("Redis Cluster's key slot (CRC16 XMODEM mod 16384); run resources are moved onto slot 0", () => {
    // The CRC16 check value, and the slot redis-cli CLUSTER KEYSLOT gives for "foo".
    expect(slotOf('123456789')).toBe(0x31c3);
    expect(slotOf('foo')).toBe(12182);
    const name = slotZeroName('run-1:stock');
    expect(name.startsWith('run-1:stock~')).toBe(true);
    expect(slotOf(name)).toBe(0);
  });

  it('the probe of a promotion fault is asked about the node the fault acted on', async () => {
    const asked: unknown[] = [];
    const deployment = {
      faults: {
        observe: async (query: unknown) => {
          asked.push(query);
          return { seen: true, detail: 'n2 is primary', afterMs: 5 };
        },
      },
    } as unknown as Deployment;
    const started = await observePhase(deployment, 'split-brain', { node: 'n1' }, 'started', 3_000, 0);
    expect(started.seen).toBe(true);
    expect(asked[0]).toMatchObject({ fault: 'splitBrain', node: 'n1', phase: 'started', timeoutMs: 3_000 });
    await observePhase(deployment, 'failover', { node: 'n3', how: 'kill' }, 'healed', 3_000, 0);
    expect(asked[1]).toMatchObject({ fault: 'failover', node: 'n3', phase: 'healed' });
    const nowhere = await observePhase(deployment, 'failover', {}, 'started', 3_000, 0);
    expect(nowhere.seen).toBe(false);
    await observePhase(deployment, 'failover-lagged', { node: 'n1', how: 'lagged' }, 'started', 3_000, 0);
    expect(asked[2]).toMatchObject({ fault: 'failover', node: 'n1', phase: 'started' });
  });

  it('failover-lagged asks for a lagged failover, waits for the promotion and records the lag and who was promoted', async () => {
    const calls: unknown[] = [];
    const lag = { windowMs: 1004, primaryOffset: 9000, replicaOffsets: { n4: 7000 } };
    const deployment = {
      backend: 'redis-cluster',
      nodes: ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'],
      faults: {
        failover: async (options: unknown) => {
          calls.push(options);
          return { from: 'n1', lag };
        },
        observe: async (query: unknown) => {
          calls.push(query);
          return { seen: true, detail: 'n1: no answer, n4: primary; n4 promoted', afterMs: 5 };
        },
        heal: async () => undefined,
      },
    } as unknown as Deployment;
    const started = await startServerFault('failover-lagged', deployment, () => 0.1, 3_000);
    expect(calls[0]).toEqual({ how: 'lagged' });
    expect(calls[1]).toMatchObject({ fault: 'failover', node: 'n1', phase: 'started' });
    expect(started.target).toEqual({ node: 'n1', how: 'lagged', lag, promoted: 'n4' });
    // The plain failover still picks graceful or kill by the seed, never the lagged one.
    const plain = await startServerFault('failover', deployment, () => 0.9, 3_000);
    expect(calls[2]).toEqual({ how: 'kill' });
    expect(plain.target.how).toBe('kill');
  });

  it('the suite runs them as a group of the full matrix only', () => {
    const replicated = (short: boolean) =>
      suiteMatrix(short, 1).filter((entry) => entry.options.backend.startsWith('redis-'));
    expect(replicated(true)).toEqual([]);
    const full = replicated(false);
    expect(
      full.map((x) => `${x.options.backend} ${x.options.workload} ${x.options.fault} ${x.expect}`),
    ).toEqual([
      'redis-sentinel mutex failover-lagged illegal',
      'redis-sentinel inventory failover-lagged illegal',
      'redis-sentinel inventory split-brain illegal',
      'redis-sentinel-epoch inventory failover-lagged,split-brain fences-ok',
      'redis-sentinel-wait mutex failover-lagged report',
      'redis-cluster mutex failover-lagged illegal',
      'redis-cluster inventory failover-lagged illegal',
      'redis-cluster inventory split-brain illegal',
      'redis-cluster-epoch inventory failover-lagged,split-brain fences-ok',
      'redis-cluster-wait mutex failover-lagged report',
    ]);
    // The plain fenced inventory is convicted for the fence the lock reused (#17), not for a stale write.
    for (const x of full.filter((c) => c.options.workload === 'inventory' && c.expect === 'illegal')) {
      expect(x.why).toMatch(/fence reused .*\(reissued\)/);
    }
  });
});
