import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { CleanupFailedError, NodesInUseError, RemoteCommandError } from '../errors.js';
import { ClientProxies } from '../faults/client-proxies.js';
import type { FaultPrimitives } from '../faults/primitives.js';
import type { ProbeTarget } from '../leader.js';
import { type Cleanup, trackCleanup, untrackCleanup } from '../local/reaper.js';
import type { LocalRecipe, NodeLayout } from '../local/recipe.js';
import { RECIPES } from '../local/recipes.js';
import { clusterToken, memberIds } from '../members.js';
import { clockShimError, clockShimPath } from '../native.js';
import type { ResolvedOptions } from '../options.js';
import { ProviderCluster } from '../provider-cluster.js';
import type { FaultProxy } from '../proxy/proxy.js';
import type { Topology } from '../types.js';
import { AliveMarks } from './alive.js';
import { CONTROL_BASE, CONTROL_PREFIX, sweepStaleControlDirs, writeControlOwner } from './control-dirs.js';
import { SshLinks } from './links.js';
import { SshNode } from './node.js';
import type { ResolvedSsh } from './options.js';
import {
  ALIVE_STALE_MS,
  asRoot,
  healLinksScript,
  installScript,
  resumeRunScript,
  SWEEP_IN_USE,
  shimCheckScript,
  stopRunScript,
  sweepScript,
} from './scripts.js';
import { SshSession, shellQuote } from './session.js';

/** Standard ports: each node is its own machine. */
const PORTS: Readonly<Record<LocalRecipe['server'], { client: number; peers: number[] }>> = {
  redis: { client: 6379, peers: [] },
  etcd: { client: 2379, peers: [2380] },
  zookeeper: { client: 2181, peers: [2888, 3888] },
};
/** apt-get over a slow mirror can take minutes; everything else on a node is quick. */
const INSTALL_MS = 10 * 60_000;
const SHIM_ARCH: Partial<Record<string, string>> = { x64: 'x86_64', arm64: 'aarch64' };

function sshFaultPrimitives(clients: ClientProxies, links: SshLinks): FaultPrimitives<SshNode> {
  return {
    clients,
    running: (node) => node.running(),
    processState: (node) => node.processState(),
    kill: (node) => node.signal('KILL'),
    start: (node) => node.startServer(),
    signal: (node, signal) => node.signal(signal),
    cutLinks: (pairs) => links.cut(pairs),
    healLinks: () => links.heal(),
    writeClock: (node, offsetMs, rate) => node.writeClock(offsetMs, rate),
  };
}

function say(line: string): void {
  process.stderr.write(`[@fencekit/cluster] ssh: ${line}\n`);
}

/**
 * Jepsen's model: machines reached over ssh, one member each. fencekit installs the server from Debian packages
 * when missing, writes its configuration into a directory of this run (`<baseDir>/<run id>`), starts it, applies
 * faults there (signals, tagged iptables rules, the clock shim's file) and, at close, stops it, copies its log and
 * configuration home and wipes the directory. Clients reach each node directly, or through a fault proxy here.
 */
export class SshCluster extends ProviderCluster<SshNode> {
  readonly provider = 'ssh';

  private constructor(
    topology: Topology,
    recipe: LocalRecipe,
    nodes: readonly SshNode[],
    private readonly clients: ClientProxies,
    private readonly ssh: ResolvedSsh,
    private readonly controlDir: string,
    private readonly marks: AliveMarks,
    clockRefused: string | undefined,
  ) {
    super(
      topology,
      recipe,
      nodes,
      sshFaultPrimitives(clients, new SshLinks(nodes, ssh.runId)),
      250,
      clockRefused === undefined,
    );
    // The generic reason ("started without the shim") would hide the node's own.
    if (clockRefused !== undefined && recipe.clockShim) this.unsupported.clock = clockRefused;
  }

  /** This run's name on the nodes (its directory, its rules' tag). */
  get runId(): string {
    return this.ssh.runId;
  }

  probeTarget(node: SshNode): ProbeTarget {
    return { id: node.id, host: node.host, port: node.layout.clientPort };
  }

  protected logTail(node: SshNode): Promise<string> {
    return node.logTail();
  }

  protected async teardown(): Promise<void> {
    this.marks.stop();
    await this.clients.close();
    const failures = (await Promise.all(this.members.map((n) => finish(n, this.ssh)))).filter(
      (f): f is string => f !== undefined,
    );
    untrackCleanup(this);
    rmSync(this.controlDir, { recursive: true, force: true });
    for (const failure of failures) say(failure);
    if (failures.length > 0) throw new CleanupFailedError(failures);
  }

  static async start(options: ResolvedOptions, ssh: ResolvedSsh): Promise<SshCluster> {
    const recipe = RECIPES[options.topology];
    const ports = PORTS[recipe.server];
    // Short: the control sockets' paths must fit a unix socket address.
    for (const stale of sweepStaleControlDirs())
      say(`ended the ssh masters of a dead run and removed ${stale}`);
    const controlDir = await mkdtemp(`${CONTROL_BASE}/${CONTROL_PREFIX}`);
    writeControlOwner(controlDir);
    const sessions: SshSession[] = [];
    const proxies = new Map<string, FaultProxy>();
    const nodes: SshNode[] = [];
    const owner = {};
    let marks: AliveMarks | undefined;
    const dir = `${ssh.baseDir}/${ssh.runId}`;
    // Until the cluster owns them: whatever was started is stopped on the nodes even if we die meanwhile.
    trackCleanup(owner, atExit(sessions, ssh.runId, dir, controlDir));
    try {
      // Settled, not raced: a failure must not leave other nodes' connections opening after the clean-up ran.
      const opened = await allSettled(
        ssh.targets.map(async (target) => {
          const session = await SshSession.open(target, {
            controlDir,
            hostKeys: ssh.hostKeys,
            ...(ssh.knownHostsFile ? { knownHostsFile: ssh.knownHostsFile } : {}),
            connectTimeoutMs: 10_000,
          });
          sessions.push(session);
          return session;
        }),
      );
      // From here each node carries this run's mark (the sweep in `prepare` makes it), kept fresh until the end.
      marks = new AliveMarks(opened, dir);
      options.signal?.throwIfAborted();
      const ids = memberIds(ssh.targets.length);
      const layouts: NodeLayout[] = ids.map((id, i) => ({
        id,
        index: i + 1,
        dir,
        listenHost: '0.0.0.0',
        advertisedHost: ssh.hosts[i]!,
        clientPort: ports.client,
        advertisedClientPort: ports.client,
        peerPorts: ports.peers,
        advertisedPeerPorts: ports.peers,
      }));
      const shim = recipe.clockShim && options.clockShim ? clockShimPath() : undefined;
      const token = clusterToken();
      const prepared = await allSettled(
        layouts.map(async (layout, i) => {
          const session = opened[i]!;
          let endpoint = `${ssh.hosts[i]}:${ports.client}`;
          if (options.proxy) {
            const proxy = await ClientProxies.listen(layout.id, ports.client, ssh.hosts[i]);
            proxies.set(layout.id, proxy);
            endpoint = proxy.endpoint;
          }
          const node = new SshNode(
            layout,
            session,
            ssh.hosts[i]!,
            recipe.launch(layout, layouts, token),
            endpoint,
          );
          await prepare(node, recipe, ssh, shim);
          return node;
        }),
      );
      nodes.push(...prepared);
      options.signal?.throwIfAborted();
      const refused = nodes.find((n) => 'refused' in n.clockShim);
      const clockRefused = !recipe.clockShim
        ? undefined
        : shim === undefined
          ? (clockShimError() ??
            (options.clockShim ? 'the clock shim could not be built here' : 'started with clockShim: false'))
          : refused && 'refused' in refused.clockShim
            ? `node ${refused.id} (${refused.session.name}): ${refused.clockShim.refused}`
            : undefined;
      const cluster = new SshCluster(
        options.topology,
        recipe,
        nodes,
        new ClientProxies(proxies),
        ssh,
        controlDir,
        marks,
        clockRefused,
      );
      untrackCleanup(owner);
      trackCleanup(cluster, atExit(sessions, ssh.runId, dir, controlDir));
      await cluster.boot(options, async () => {
        await Promise.all(nodes.map((n) => n.writeFiles()));
        await Promise.all(nodes.map((n) => n.startServer()));
      });
      return cluster;
    } catch (error) {
      marks?.stop();
      await Promise.all([...proxies.values()].map((p) => p.close()));
      await Promise.all(
        sessions.map(async (s) => {
          await s.run(endRun(ssh.runId, dir)).catch(() => undefined);
          await s.close();
        }),
      );
      untrackCleanup(owner);
      rmSync(controlDir, { recursive: true, force: true });
      throw error;
    }
  }
}

/**
 * Before the run on one node: the packages (a no-op when `dpkg -s` finds them), the run's directory made and
 * leftovers of earlier runs healed (one sweep, said on stderr), and the clock shim copied there and tried with the
 * node's loader.
 */
async function prepare(
  node: SshNode,
  recipe: LocalRecipe,
  ssh: ResolvedSsh,
  shim: string | undefined,
): Promise<void> {
  const installed = await node.check(installScript(recipe.server), {
    timeoutMs: INSTALL_MS,
    what: `installing ${recipe.server}`,
  });
  if (!installed.includes('installed: none')) say(`${node.id} (${node.session.name}): ${installed.trim()}`);
  const sweep = await node.run(sweepScript(ssh.baseDir, ssh.runId), { what: 'healing leftovers' });
  if (sweep.exitCode === SWEEP_IN_USE) {
    const runs = sweep.stdout.split('\n').flatMap((l) => (l.startsWith('live ') ? [l.slice(5)] : []));
    throw new NodesInUseError(`${node.id} (${node.session.name})`, runs, ALIVE_STALE_MS);
  }
  if (sweep.exitCode !== 0)
    throw new RemoteCommandError(
      `${node.id} (${node.session.name})`,
      'healing leftovers',
      sweep.exitCode,
      `${sweep.stdout}${sweep.stderr}`.trim().slice(-2_000),
    );
  const swept = sweep.stdout.trim();
  if (swept) {
    const lines = swept.split('\n');
    const count = (kind: string) => lines.filter((l) => l.startsWith(`${kind} `)).length;
    say(
      `${node.id} (${node.session.name}): healed leftovers of an earlier run: ${count('rule')} iptables rule(s) removed, ` +
        `${count('stopped')} stopped process(es) resumed, ${count('killed')} server(s) killed, ${count('dir')} run dir(s) wiped`,
    );
  }
  // The sweep made the run's directory (mode 700) before anything else, or failed.
  if (shim === undefined) return;
  const arch = SHIM_ARCH[process.arch] ?? process.arch;
  const remote = `${node.dir}/libfencekit-clockshim.so`;
  await node.check(`cat > ${shellQuote(remote)}`, {
    input: readFileSync(shim),
    what: 'copying the clock shim',
  });
  const verdict = (await node.check(shimCheckScript(remote, arch), { what: 'trying the clock shim' })).trim();
  node.clockShim = verdict === 'ok' ? { path: remote } : { refused: verdict };
}

/**
 * At close, on one node: this run stopped and its rules gone, its log and configuration copied home, its dir wiped.
 * Returns what could not be cleaned there (naming the node), or nothing: a failed step does not stop the others.
 */
async function finish(node: SshNode, ssh: ResolvedSsh): Promise<string | undefined> {
  const failed: string[] = [];
  const step = async (what: string, script: string) => {
    try {
      const { exitCode, stderr } = await node.run(script, { what });
      if (exitCode !== 0)
        failed.push(`${what} exited ${exitCode}${stderr.trim() ? `: ${stderr.trim().slice(-300)}` : ''}`);
    } catch (error) {
      failed.push(`${what}: ${(error as Error).message}`);
    }
  };
  try {
    await step('stopping the run', stopRunScript(ssh.runId));
    if (ssh.collectDir)
      await node
        .collect(ssh.collectDir)
        .catch((error: Error) => failed.push(`collecting the logs: ${error.message}`));
    await step('wiping the run dir', `rm -rf ${shellQuote(node.dir)}`);
  } finally {
    await node.session.close();
  }
  return failed.length === 0
    ? undefined
    : `${node.id} (${node.session.name}) not cleaned: ${failed.join('; ')}`;
}

/** Like `Promise.all`, but rejects (with the first failure) only once every promise has settled. */
async function allSettled<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * The clean-up at exit for the nodes of `sessions` (read when it runs: a start adds them as they connect). At the
 * end (`final`): the run stopped and wiped on every node, the control dir removed. On a signal someone else handles
 * (the harness's Ctrl-C): only healed (rules gone, servers resumed) at once, since the teardown that follows
 * collects the logs, then wipes. Stays registered for the end; says on stderr which node failed.
 */
function atExit(sessions: readonly SshSession[], runId: string, dir: string, controlDir: string): Cleanup {
  return (final) => {
    const codes = SshSession.runSyncAll(sessions, () => (final ? endRun(runId, dir) : healRun(runId)));
    codes.forEach((code, i) => {
      if (code !== 0) say(`${sessions[i]!.name}: ${final ? 'clean-up' : 'heal'} failed (exit ${code})`);
    });
    if (final) rmSync(controlDir, { recursive: true, force: true });
    return 'keep';
  };
}

/** This run's faults undone on a node at once, as root: its rules removed, its processes resumed. */
function healRun(runId: string): string {
  return asRoot(`${healLinksScript(runId)}; ${resumeRunScript(runId)}`);
}

/** The whole end of a run on a node, as root, in one command: for clean-ups that cannot do it step by step. */
function endRun(runId: string, dir: string): string {
  return asRoot(`${stopRunScript(runId)}; rm -rf ${shellQuote(dir)}`);
}
