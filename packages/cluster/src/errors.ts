/**
 * Failures of the cluster machinery itself (not of the locks under test). Each has a stable `code`, a message
 * that names the node or fault involved, and the useful fields attached. Bad arguments are reported with
 * core's `InvalidArgumentError`.
 */
export type ClusterErrorCode =
  | 'start-failed'
  | 'unsupported-fault'
  | 'unknown-node'
  | 'proxy-required'
  | 'not-running'
  | 'not-controlled'
  | 'unreachable'
  | 'ssh-failed'
  | 'remote-timeout'
  | 'remote-failed'
  | 'nodes-in-use'
  | 'cleanup-failed'
  | 'closed';

export abstract class ClusterError extends Error {
  abstract readonly code: ClusterErrorCode;
  override get name(): string {
    return this.constructor.name;
  }
}

/** A server did not become ready in time or exited while starting; `logTail` holds the end of its log. */
export class ClusterStartError extends ClusterError {
  readonly code = 'start-failed';
  constructor(
    readonly node: string,
    readonly reason: string,
    readonly logTail = '',
    options?: ErrorOptions,
  ) {
    super(
      `Node ${node} failed to start: ${reason}${logTail ? `\n--- log tail ---\n${logTail}` : ''}`,
      options,
    );
  }
}

/** The fault cannot be injected honestly on this server or provider (e.g. a clock shim on Go's etcd). */
export class UnsupportedFaultError extends ClusterError {
  readonly code = 'unsupported-fault';
  constructor(
    readonly fault: string,
    readonly target: string,
    readonly reason: string,
  ) {
    super(`Fault "${fault}" is not supported on ${target}: ${reason}`);
  }
}

/** A fault named a node id the cluster does not have. */
export class UnknownNodeError extends ClusterError {
  readonly code = 'unknown-node';
  constructor(
    readonly node: string,
    readonly known: readonly string[],
  ) {
    super(`Unknown node "${node}"; this cluster has ${known.join(', ')}`);
  }
}

/**
 * A fault that acts on a running server process (kill, pause, resume) named a node whose server is not running
 * (killed, or exited by itself): signalling nothing must not be recorded as a fault that happened.
 */
export class NodeNotRunningError extends ClusterError {
  readonly code = 'not-running';
  constructor(
    readonly fault: string,
    readonly node: string,
  ) {
    super(`Fault "${fault}" on node ${node}: its server is not running (killed or exited); nothing was done`);
  }
}

/** A client-side fault (latency, cutClients, toxics) needs the cluster to be started with `proxy: true`. */
export class ProxyRequiredError extends ClusterError {
  readonly code = 'proxy-required';
  constructor(readonly fault: string) {
    super(`Fault "${fault}" acts on the client proxy: start the cluster with { proxy: true }`);
  }
}

/**
 * A server fault (kill, restart, pause, partition, clock, promotion) asked of an external cluster: fencekit does
 * not control those servers, so only faults on the clients' path apply there (`attachCluster`).
 */
export class ServerFaultRefusedError extends ClusterError {
  readonly code = 'not-controlled';
  constructor(readonly fault: string) {
    super(
      `Fault "${fault}" acts on the servers, which fencekit does not control on an external cluster: only client-side faults apply there (${CLIENT_SIDE_FAULTS.join(', ')})`,
    );
  }
}

/** An endpoint of an external cluster did not answer its server's own readiness request in time. */
export class EndpointUnreachableError extends ClusterError {
  readonly code = 'unreachable';
  constructor(
    readonly node: string,
    readonly endpoint: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`External endpoint ${endpoint} (${node}) does not serve: ${reason}`, options);
  }
}

/**
 * ssh could not reach or log in to a node (exit 255: refused, unknown or changed host key, key not accepted, no
 * answer within the connect timeout). Never a password prompt: ssh runs in batch mode.
 */
export class SshConnectionError extends ClusterError {
  readonly code = 'ssh-failed';
  constructor(
    readonly node: string,
    readonly detail: string,
  ) {
    super(`ssh to ${node} failed: ${detail}`);
  }
}

/** A command on a node did not finish within its bound; it was killed there and here. */
export class RemoteTimeoutError extends ClusterError {
  readonly code = 'remote-timeout';
  constructor(
    readonly node: string,
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what} on ${node} did not finish within ${timeoutMs} ms; it was killed`);
  }
}

/** A command on a node exited non-zero: what it was, where, its exit code and the end of its output. */
export class RemoteCommandError extends ClusterError {
  readonly code = 'remote-failed';
  constructor(
    readonly node: string,
    readonly what: string,
    readonly exitCode: number,
    readonly output: string,
  ) {
    super(`${what} on ${node}: exit ${exitCode}${output ? `: ${output}` : ''}`);
  }
}

/** The `Faults` calls that act on the clients' path only (the fault proxy), allowed on an external cluster. */
export const CLIENT_SIDE_FAULTS = ['cutClients', 'cutProcess', 'latency', 'toxic', 'heal'] as const;

/** The cluster was closed; no more faults can be injected. */
export class ClusterClosedError extends ClusterError {
  readonly code = 'closed';
  constructor() {
    super('The cluster is closed');
  }
}

/**
 * Another run holds a node: its mark (`<baseDir>/<run>/alive`) was touched by its owner within `staleMs`. A start
 * leaves such a run alone (its servers, rules and directory) and fails with this instead.
 */
export class NodesInUseError extends ClusterError {
  readonly code = 'nodes-in-use';
  constructor(
    readonly node: string,
    readonly runs: readonly string[],
    readonly staleMs: number,
  ) {
    super(
      `${node} is in use by run ${runs.join(', ')} (its mark touched within ${staleMs / 1000} s); not touching it`,
    );
  }
}

/** `close()` could not clean some nodes (a run's servers, rules or dir may be left there); one line per node. */
export class CleanupFailedError extends ClusterError {
  readonly code = 'cleanup-failed';
  constructor(readonly failures: readonly string[]) {
    super(`clean-up failed: ${failures.join(' | ')}`);
  }
}
