import { InvalidArgumentError } from '@fencekit/core';
import { type ResolvedSsh, resolveSsh } from './ssh/options.js';
import type { ClusterOptions, ProviderName, Topology } from './types.js';

export const DEFAULT_NODES: Readonly<Record<Topology, number>> = {
  redis: 1,
  'redis-independent': 5,
  'redis-sentinel': 3,
  'redis-cluster': 6,
  etcd: 3,
  zookeeper: 3,
};

/** Upper bound on nodes: the machine is shared, and more than 7 consensus members is never useful. */
const MAX_NODES = 7;

export interface ResolvedOptions {
  readonly topology: Topology;
  readonly nodes: number;
  readonly provider: ProviderName;
  readonly proxy: boolean;
  readonly signal: AbortSignal | undefined;
  readonly startTimeoutMs: number;
  readonly clockShim: boolean;
  /** Provider 'ssh': the nodes and how to reach them. */
  readonly ssh?: ResolvedSsh;
}

/** Checks `startCluster` options and fills defaults; bad input throws `InvalidArgumentError` naming the field. */
export function resolveOptions(options: ClusterOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with a topology');
  }
  const topology = options.topology;
  if (typeof topology !== 'string' || !(topology in DEFAULT_NODES)) {
    throw new InvalidArgumentError('topology', topology, `one of ${Object.keys(DEFAULT_NODES).join(', ')}`);
  }
  const provider = options.provider ?? 'local';
  if (provider !== 'local' && provider !== 'docker' && provider !== 'ssh') {
    throw new InvalidArgumentError('provider', provider, "'local', 'docker' or 'ssh'");
  }
  if (provider !== 'ssh' && options.ssh !== undefined)
    throw new InvalidArgumentError('ssh', '(ssh options)', "only with provider 'ssh'");
  const ssh = provider === 'ssh' ? resolveSsh(topology, options.nodes, options.ssh) : undefined;
  const nodes = ssh ? ssh.targets.length : (options.nodes ?? DEFAULT_NODES[topology]);
  if (typeof nodes !== 'number' || !Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) {
    throw new InvalidArgumentError('nodes', nodes, `an integer from 1 to ${MAX_NODES}`);
  }
  if (topology === 'redis' && nodes !== 1) {
    throw new InvalidArgumentError(
      'nodes',
      nodes,
      "1 for 'redis' (use 'redis-independent' for several masters)",
    );
  }
  if (topology === 'redis-sentinel' && nodes < 3) {
    throw new InvalidArgumentError(
      'nodes',
      nodes,
      "3 or more for 'redis-sentinel' (a primary, replicas, and a Sentinel majority that survives one node)",
    );
  }
  if (topology === 'redis-cluster' && nodes !== 6) {
    throw new InvalidArgumentError('nodes', nodes, "6 for 'redis-cluster' (3 primaries with a replica each)");
  }
  const proxy = options.proxy ?? false;
  if (typeof proxy !== 'boolean') throw new InvalidArgumentError('proxy', proxy, 'a boolean');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new InvalidArgumentError('signal', options.signal, 'an AbortSignal or undefined');
  }
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  if (typeof startTimeoutMs !== 'number' || !Number.isFinite(startTimeoutMs) || startTimeoutMs <= 0) {
    throw new InvalidArgumentError(
      'startTimeoutMs',
      startTimeoutMs,
      'a positive finite number of milliseconds',
    );
  }
  const clockShim = options.clockShim ?? true;
  if (typeof clockShim !== 'boolean') throw new InvalidArgumentError('clockShim', clockShim, 'a boolean');
  return {
    topology,
    nodes,
    provider,
    proxy,
    signal: options.signal,
    startTimeoutMs,
    clockShim,
    ...(ssh ? { ssh } : {}),
  };
}

/** Validates a node id against the cluster's ids. */
export function isNodeId(value: unknown): value is string {
  return typeof value === 'string' && /^n\d+$/.test(value);
}
