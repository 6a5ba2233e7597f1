import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { InvalidArgumentError } from '@fencekit/core';
import type { Topology } from '../types.js';
import type { SshTarget } from './session.js';

/** `startCluster({ provider: 'ssh', nodes: ['host[:port]', …], ssh })`: how to reach the nodes and what to do there. */
export interface SshOptions {
  /** Login user on every node (default: ssh's own default). Not root: commands run through `sudo -n`. */
  readonly user?: string;
  /** A private key file (its path only is ever passed on or printed, never its contents). */
  readonly keyPath?: string;
  /** The ssh port of nodes named without one (default 22). */
  readonly port?: number;
  /**
   * `strict` (default): each node's host key must already be known. `accept-new`: unknown keys are recorded in
   * `knownHostsFile` (for nodes made afresh, as the tests do); a changed key is refused either way.
   */
  readonly hostKeys?: 'strict' | 'accept-new';
  readonly knownHostsFile?: string;
  /** A local directory that receives each node's server log and configuration at close (`<dir>/<node id>/`). */
  readonly collectDir?: string;
  /** Where runs live on the nodes (default /var/lib/fencekit): one directory per run, wiped at close. */
  readonly baseDir?: string;
}

export interface ResolvedSsh {
  readonly targets: readonly SshTarget[];
  /** The address each node's servers are reached at (clients and peers): the host as given. */
  readonly hosts: readonly string[];
  readonly hostKeys: 'strict' | 'accept-new';
  readonly knownHostsFile: string | undefined;
  readonly collectDir: string | undefined;
  readonly baseDir: string;
  /** This run's name on the nodes: its directory, its iptables tag, its servers' FENCEKIT_RUN. */
  readonly runId: string;
}

/** `host` or `host:port`: a name or an IPv4 address (partitions are IPv4 iptables rules). */
const NODE = /^([A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)(?::(\d{1,5}))?$/;
/** Absolute, and nothing a shell or a later `rm -rf` could misread. */
const BASE_DIR = /^\/(?:[A-Za-z0-9._-]+\/)*[A-Za-z0-9._-]+$/;
/** The topologies a node can run alone: replicated Redis announces addresses this provider does not map. */
export const SSH_TOPOLOGIES: readonly Topology[] = ['etcd', 'zookeeper', 'redis', 'redis-independent'];

function port(value: unknown, field: string): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65_535)
    throw new InvalidArgumentError(field, value, 'a port from 1 to 65535');
  return n;
}

/** A fresh run id: sortable by time, unique enough that two runs never share a directory or a tag. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `fk-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Checks the ssh provider's options; bad input throws `InvalidArgumentError` naming the field, never a key's contents. */
export function resolveSsh(topology: Topology, nodes: unknown, ssh: SshOptions | undefined): ResolvedSsh {
  if (!SSH_TOPOLOGIES.includes(topology))
    throw new InvalidArgumentError(
      'topology',
      topology,
      `one of ${SSH_TOPOLOGIES.join(', ')} with provider 'ssh' (replicated Redis announces addresses it does not map)`,
    );
  if (!Array.isArray(nodes) || nodes.length === 0 || nodes.length > 7)
    throw new InvalidArgumentError('nodes', nodes, "1 to 7 'host[:port]' strings with provider 'ssh'");
  if (topology === 'redis' && nodes.length !== 1)
    throw new InvalidArgumentError(
      'nodes',
      nodes,
      "one node for 'redis' (use 'redis-independent' for several)",
    );
  const options = ssh ?? {};
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('ssh', options, 'an object ({ user, keyPath, port, … })');
  const defaultPort = options.port === undefined ? undefined : port(options.port, 'ssh.port');
  if (
    options.user !== undefined &&
    (typeof options.user !== 'string' || !/^[a-z_][a-z0-9_.-]{0,31}$/i.test(options.user))
  )
    throw new InvalidArgumentError('ssh.user', options.user, 'a user name (letters, digits, _ . -)');
  if (options.keyPath !== undefined && (typeof options.keyPath !== 'string' || !existsSync(options.keyPath)))
    throw new InvalidArgumentError(
      'ssh.keyPath',
      options.keyPath,
      'the path of an existing private key file',
    );
  const hostKeys = options.hostKeys ?? 'strict';
  if (hostKeys !== 'strict' && hostKeys !== 'accept-new')
    throw new InvalidArgumentError('ssh.hostKeys', hostKeys, "'strict' or 'accept-new'");
  const baseDir = options.baseDir ?? '/var/lib/fencekit';
  if (typeof baseDir !== 'string' || !BASE_DIR.test(baseDir) || baseDir.split('/').length < 3)
    throw new InvalidArgumentError(
      'ssh.baseDir',
      baseDir,
      'an absolute directory at least two levels deep, e.g. /var/lib/fencekit',
    );
  const targets: SshTarget[] = [];
  const hosts: string[] = [];
  const seen = new Set<string>();
  for (const [i, node] of nodes.entries()) {
    const match = typeof node === 'string' ? NODE.exec(node.trim()) : null;
    if (!match)
      throw new InvalidArgumentError(
        `nodes[${i}]`,
        node,
        "'host' or 'host:port' (the ssh port; a name or IPv4 address, no user)",
      );
    const host = match[1]!;
    const sshPort = match[2] === undefined ? defaultPort : port(match[2], `nodes[${i}] port`);
    // Every node runs its servers on the standard ports, so one address can hold one member only.
    if (seen.has(host)) throw new InvalidArgumentError(`nodes[${i}]`, node, 'a host not already in the list');
    seen.add(host);
    hosts.push(host);
    targets.push({
      host,
      ...(sshPort === undefined ? {} : { port: sshPort }),
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(options.keyPath === undefined ? {} : { keyFile: options.keyPath }),
    });
  }
  return {
    targets,
    hosts,
    hostKeys,
    knownHostsFile: options.knownHostsFile,
    collectDir: options.collectDir,
    baseDir,
    runId: newRunId(),
  };
}
