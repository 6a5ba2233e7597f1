import { SSH_TOPOLOGIES, type TopologyFault, unsupportedFaults } from '@fencekit/cluster';
import { sharedLockBackends } from '../backends/shared-locks.js';
import type { BackendFactory } from '../backends/types.js';
import { type FaultName, untriggerableFaults } from '../nemesis/faults.js';
import { OptionsError, type ParsedRunOptions } from './options.js';
import { scenarioSettings } from './scenario-settings.js';

/** The harness faults that @fencekit/cluster can only apply on some topologies, by the cluster fault they use. */
const TOPOLOGY_FAULTS: Readonly<Record<string, TopologyFault>> = {
  partition: 'partition',
  isolate: 'partition',
  'clock-jump': 'clock',
  'clock-drift': 'clock',
  'drift-majority': 'clock',
  'clock-jump-minority': 'clock',
  failover: 'failover',
  'failover-lagged': 'failover',
  'split-brain': 'splitBrain',
};

/**
 * Faults the backend's servers cannot take (partitions of masters that never talk, clocks without the shim): the
 * nemesis would be told "unsupported" mid-run, so they are refused here, with the cluster's own reason.
 */
function faultsWithoutEffect(faults: readonly string[], factory: BackendFactory, nodes?: number): string[] {
  if (!factory.cluster) return [];
  // On ssh the cluster has as many members as machines were named.
  const reasons = unsupportedFaults({ ...factory.cluster, ...(nodes === undefined ? {} : { nodes }) });
  return faults.flatMap((fault) => {
    const kind = TOPOLOGY_FAULTS[fault];
    const reason = kind && reasons[kind];
    return reason ? [`fault ${fault} cannot take effect on ${factory.name}: ${reason}`] : [];
  });
}

/**
 * The faults that act on the clients' side only (fault proxies between the clients and each endpoint, client
 * processes stopped): the only ones `--provider external` runs, since fencekit does not control those servers.
 */
export const CLIENT_SIDE_FAULTS: readonly FaultName[] = [
  'pause-client',
  'cut-clients',
  'latency',
  'latency-minority',
  'stall-holder',
  'stall-acquire',
  'cut-holder',
  'reset-holder',
  'suspend',
];

/** Backends whose clients follow addresses the servers announce (Sentinel, MOVED), past any proxy of ours. */
const ANNOUNCING = new Set([
  'redis-sentinel',
  'redis-cluster',
  'redis-sentinel-epoch',
  'redis-cluster-epoch',
]);

/** Why an external run of this combination cannot be made without acting on servers fencekit does not control. */
function externalProblems(options: ParsedRunOptions, factory: BackendFactory): string[] {
  if (options.provider !== 'external') return [];
  if (!factory.cluster) return [`${factory.name} runs no servers: --provider external does not apply to it`];
  if (ANNOUNCING.has(factory.name)) {
    return [
      `${factory.name} clients follow the addresses the servers announce, past the fault proxy: --provider external supports redis, redlock, zk and etcd`,
    ];
  }
  const problems: string[] = [];
  if (options.scenario) problems.push('scripted scenarios act on the servers: not with --provider external');
  for (const fault of options.fault) {
    if (!CLIENT_SIDE_FAULTS.includes(fault)) {
      problems.push(
        `fault ${fault} acts on the servers, which fencekit does not control with --provider external; client-side faults: ${CLIENT_SIDE_FAULTS.join(', ')}`,
      );
    }
  }
  const count = options.endpoints?.length ?? 0;
  if (factory.cluster.topology === 'redis' && count !== 1) {
    problems.push(`${factory.name} takes one endpoint with --provider external, got ${count}`);
  }
  return problems;
}

/** Why `--provider ssh` cannot run this backend on these nodes. */
function sshProblems(options: ParsedRunOptions, factory: BackendFactory): string[] {
  if (options.provider !== 'ssh') return [];
  if (!factory.cluster) return [`${factory.name} runs no servers: --provider ssh does not apply to it`];
  if (!SSH_TOPOLOGIES.includes(factory.cluster.topology))
    return [
      `${factory.name} runs ${factory.cluster.topology}, which --provider ssh does not run (it runs ${SSH_TOPOLOGIES.join(', ')})`,
    ];
  const count = options.nodes?.length ?? 0;
  if (factory.cluster.topology === 'redis' && count !== 1)
    return [`${factory.name} runs one Redis server: give one --nodes machine, got ${count}`];
  return [];
}

/** Refuses combinations that cannot mean anything, saying why, before anything is started. */
export function validateRun(options: ParsedRunOptions, factory: BackendFactory): void {
  const problems: string[] = [...externalProblems(options, factory), ...sshProblems(options, factory)];
  if (options.fencing && !factory.safeFences && options.workload !== 'cas' && options.workload !== 'cron') {
    problems.push(`${factory.name} gives no safe fence, so fencing cannot apply: add --no-fencing`);
  }
  const shared = sharedLockBackends();
  if ((options.workload === 'semaphore' || options.workload === 'rwlock') && !shared.includes(factory.name)) {
    problems.push(
      `the ${options.workload} workload needs semaphores and read-write locks, which the harness drives on ${shared.join(', ')}`,
    );
  }
  if (options.workload === 'election' && !factory.safeFences && !factory.nativeElection) {
    problems.push(`the election workload needs terms; ${factory.name} has neither fences nor an election`);
  }
  for (const fault of options.fault) {
    if (!factory.faults.includes(fault)) {
      problems.push(
        `fault ${fault} does not apply to ${factory.name}; it supports: ${factory.faults.join(', ')}`,
      );
    }
  }
  problems.push(
    ...faultsWithoutEffect(
      options.fault.filter((f) => factory.faults.includes(f)),
      factory,
      options.provider === 'ssh' ? options.nodes?.length : undefined,
    ),
  );
  problems.push(...untriggerableFaults(options.workload, options.fault));
  const required = scenarioSettings(options.scenario).backend;
  if (required && factory.name !== required.name) {
    problems.push(`the ${options.scenario} scenario is ${required.why}: use --backend ${required.name}`);
  }
  if (options.scenario && options.fault.length > 0) {
    problems.push('a scripted --scenario runs alone: drop --fault');
  }
  if (problems.length > 0) throw new OptionsError(`cannot run this combination:\n  ${problems.join('\n  ')}`);
}
