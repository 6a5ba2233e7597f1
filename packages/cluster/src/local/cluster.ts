import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ProbeTarget } from '../leader.js';
import { clusterToken, memberIds } from '../members.js';
import { clockShimPath, writeClockSkew } from '../native.js';
import type { ResolvedOptions } from '../options.js';
import { freePorts } from '../ports.js';
import { ProviderCluster, ServerExitedError } from '../provider-cluster.js';
import type { Topology } from '../types.js';
import { baseDir, sweepStaleDirs } from './dirs.js';
import { localFaultPrimitives } from './faults.js';
import { LocalNetwork } from './network.js';
import { LocalNode } from './node.js';
import { ServerProcess } from './process.js';
import { trackDir, untrackDir } from './reaper.js';
import type { LocalRecipe, NodeLayout } from './recipe.js';
import { RECIPES } from './recipes.js';

/** The skew file the clock shim reads, in each node's dir. */
export const CLOCK_FILE = 'clock';

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
    return node.process.logTail();
  }

  /** A process we started and saw exit will not come to serve: no point in waiting out the timeout for it. */
  protected override checkRunning(node: LocalNode): void {
    if (!node.process.running) throw new ServerExitedError();
  }

  protected async teardown(): Promise<void> {
    await Promise.all(this.members.map((n) => n.process.kill('SIGKILL').catch(() => undefined)));
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
    let nodes: LocalNode[] = [];
    const network = await LocalNetwork.create(
      ids.map((id, i) => ({ id, clientPort: own(i)[0]!, peerPorts: own(i).slice(1) })),
      { clientProxy: options.proxy, peerProxy: recipe.peerPortCount > 0 && ids.length > 1 },
      () => nodes.map((n) => ({ id: n.id, pid: n.pid })),
    );
    const layouts: NodeLayout[] = ids.map((id, i) => ({
      id,
      index: i + 1,
      dir: join(rootDir, id),
      listenHost: '127.0.0.1',
      advertisedHost: '127.0.0.1',
      clientPort: own(i)[0]!,
      advertisedClientPort: network.clients.get(id)?.port ?? own(i)[0]!,
      peerPorts: own(i).slice(1),
      advertisedPeerPorts: network.peerProxies.get(id)?.map((p) => p.port) ?? own(i).slice(1),
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
      return new LocalNode(layout, proc, shim ? join(layout.dir, CLOCK_FILE) : undefined);
    });
    const cluster = new LocalCluster(options.topology, recipe, rootDir, nodes, network);
    // All members at once: etcd and ZooKeeper members wait for a quorum before they serve.
    await cluster.boot(options, async () => {
      for (const node of nodes) node.process.start();
    });
    return cluster;
  }
}
