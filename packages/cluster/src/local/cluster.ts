import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ProbeTarget } from '../leader.js';
import { clusterToken, memberIds } from '../members.js';
import { clockShimPath, writeClockSkew } from '../native.js';
import type { ResolvedOptions } from '../options.js';
import { freePorts } from '../ports.js';
import { ProviderCluster, ServerExitedError } from '../provider-cluster.js';
import { replicationFor } from '../replication.js';
import type { Topology } from '../types.js';
import { baseDir, sweepStaleDirs } from './dirs.js';
import { localFaultPrimitives } from './faults.js';
import { LocalNetwork } from './network.js';
import { LocalNode } from './node.js';
import { ServerProcess } from './process.js';
import { trackDir, untrackDir } from './reaper.js';
import type { LaunchSpec, LocalRecipe, NodeLayout } from './recipe.js';
import { RECIPES } from './recipes.js';

/** The skew file the clock shim reads, in each node's dir. */
export const CLOCK_FILE = 'clock';

/** A node's second process (its Sentinel): its files beside the server's, its own log. */
function companionProcess(layout: NodeLayout, spec: LaunchSpec & { readonly name: string }): ServerProcess {
  for (const [name, content] of Object.entries(spec.files ?? {}))
    writeFileSync(join(layout.dir, name), content);
  return new ServerProcess({
    command: spec.command,
    args: spec.args,
    env: spec.env,
    cwd: layout.dir,
    logFile: join(layout.dir, `${spec.name}.log`),
  });
}

/** Servers as processes on loopback, each in its own dir, reaching each other through the network's peer proxies. */
export class LocalCluster extends ProviderCluster<LocalNode> {
  readonly provider = 'local';

  private constructor(
    topology: Topology,
    recipe: LocalRecipe,
    readonly rootDir: string,
    nodes: readonly LocalNode[],
    readonly network: LocalNetwork,
  ) {
    super(topology, recipe, nodes, localFaultPrimitives(network), 200, nodes[0]?.clockFile !== undefined);
  }

  probeTarget(node: LocalNode): ProbeTarget {
    return { id: node.id, host: '127.0.0.1', port: node.layout.clientPort };
  }

  protected async logTail(node: LocalNode): Promise<string> {
    // A node's Sentinel logs beside it: what a deployment that did not form needs read.
    const companions = node.companions.map((c) => `\n--- ${c.spec.logFile}\n${c.logTail(1000)}`);
    return node.process.logTail() + companions.join('');
  }

  /** A process we started and saw exit will not come to serve: no point in waiting out the timeout for it. */
  protected override checkRunning(node: LocalNode): void {
    if (!node.process.running) throw new ServerExitedError();
  }

  protected async teardown(): Promise<void> {
    await Promise.all(
      this.members.flatMap((n) =>
        [n.process, ...n.companions].map((p) => p.kill('SIGKILL').catch(() => undefined)),
      ),
    );
    await this.network.close();
    rmSync(this.rootDir, { recursive: true, force: true });
    untrackDir(this.rootDir);
  }

  static async start(options: ResolvedOptions): Promise<LocalCluster> {
    const recipe = RECIPES[options.topology];
    sweepStaleDirs(baseDir());
    const rootDir = mkdtempSync(join(baseDir(), `fencekit-${options.topology}-${process.pid}-`));
    trackDir(rootDir);
    const ids = memberIds(options.nodes);
    const perNode = 1 + recipe.peerPortCount;
    const ports = await freePorts(ids.length * perNode);
    const own = (i: number) => ports.slice(i * perNode, (i + 1) * perNode);
    // Replicated Redis: peers call the client port too (replication, Sentinels), through a peer proxy of its own.
    const peerPorts = (i: number) => (recipe.peersUseClientPort ? own(i) : own(i).slice(1));
    let nodes: LocalNode[] = [];
    const network = await LocalNetwork.create(
      ids.map((id, i) => ({ id, clientPort: own(i)[0]!, peerPorts: peerPorts(i) })),
      { clientProxy: options.proxy, peerProxy: recipe.peerPortCount > 0 && ids.length > 1 },
      // A node's companion (its Sentinel) calls its peers as that node: a partition cuts its links too.
      () =>
        nodes.flatMap((n) => [
          { id: n.id, pid: n.pid },
          ...n.companions.map((c) => ({ id: n.id, pid: c.pid })),
        ]),
    );
    const layouts: NodeLayout[] = ids.map((id, i) => ({
      id,
      index: i + 1,
      dir: join(rootDir, id),
      listenHost: '127.0.0.1',
      advertisedHost: '127.0.0.1',
      clientPort: own(i)[0]!,
      advertisedClientPort: network.clients.get(id)?.port ?? own(i)[0]!,
      peerPorts: peerPorts(i),
      advertisedPeerPorts: network.peerProxies.get(id)?.map((p) => p.port) ?? peerPorts(i),
    }));
    const rewriter = recipe.peerHandshakeRewriter?.bind(recipe);
    if (rewriter) {
      for (const proxies of network.peerProxies.values()) {
        proxies.forEach((proxy, i) => {
          proxy.handshakeRewriter = rewriter(i, layouts);
        });
      }
    }
    const token = clusterToken();
    nodes = layouts.map((layout) => {
      const spec = recipe.launch(layout, layouts, token);
      mkdirSync(layout.dir, { recursive: true });
      for (const [name, content] of Object.entries(spec.files ?? {})) {
        const path = join(layout.dir, name);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, content);
      }
      const shim = recipe.clockShim && options.clockShim ? clockShimPath() : undefined;
      if (shim) writeClockSkew(join(layout.dir, CLOCK_FILE), 0, 1);
      const proc = new ServerProcess({
        command: spec.command,
        args: spec.args,
        env: shim
          ? { ...spec.env, LD_PRELOAD: shim, FENCEKIT_CLOCK_FILE: join(layout.dir, CLOCK_FILE) }
          : spec.env,
        cwd: layout.dir,
        logFile: join(layout.dir, 'server.log'),
      });
      const companion = recipe.companion?.(layout, layouts);
      const companions = companion ? [companionProcess(layout, companion)] : [];
      return new LocalNode(layout, proc, shim ? join(layout.dir, CLOCK_FILE) : undefined, companions);
    });
    const cluster = new LocalCluster(options.topology, recipe, rootDir, nodes, network);
    cluster.replication = replicationFor(recipe, layouts, {
      node: (l) => ({ host: '127.0.0.1', port: l.clientPort }),
      sentinel: (l) => ({ host: '127.0.0.1', port: l.peerPorts[1]! }),
    });
    // All members at once: etcd and ZooKeeper members wait for a quorum before they serve.
    await cluster.boot(options, async () => {
      for (const node of nodes) node.process.start();
      for (const node of nodes) for (const c of node.companions) c.start();
    });
    return cluster;
  }
}
