import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ClusterStartError, UnknownNodeError } from '../errors.js';
import { type ProbeTarget, waitForLeader } from '../leader.js';
import { clockShimPath, writeClockSkew } from '../native.js';
import type { ResolvedOptions } from '../options.js';
import { freePorts } from '../ports.js';
import type { Cluster, ClusterNode, Faults, Topology, WaitForLeaderOptions } from '../types.js';
import { poll } from '../wait.js';
import { LocalFaults } from './faults.js';
import { LocalNetwork } from './network.js';
import { ServerProcess } from './process.js';
import { trackDir, untrackDir } from './reaper.js';
import type { LocalRecipe, NodeLayout } from './recipe.js';
import { RECIPES } from './recipes.js';

/** The skew file the clock shim reads, in each node's dir. */
export const CLOCK_FILE = 'clock';

/** A node of a local cluster: its layout, its process, and the pid it has right now. */
export class LocalNode implements ClusterNode {
  constructor(
    readonly layout: NodeLayout,
    readonly process: ServerProcess,
    /** The clock shim's skew file, when the shim is loaded into this server. */
    readonly clockFile: string | undefined,
  ) {}
  get id(): string {
    return this.layout.id;
  }
  get endpoint(): string {
    return `127.0.0.1:${this.layout.advertisedClientPort}`;
  }
  get directEndpoint(): string {
    return `127.0.0.1:${this.layout.clientPort}`;
  }
  get pid(): number | undefined {
    return this.process.pid;
  }
  toJSON(): ClusterNode {
    return { id: this.id, endpoint: this.endpoint, directEndpoint: this.directEndpoint, pid: this.pid };
  }
}

/**
 * Removes cluster dirs whose owning process is gone (it was SIGKILLed, so no exit handler ran; its servers died
 * with it through the pdeathsig launcher). Dirs of live processes, other users' included, are left alone.
 */
function sweepStaleDirs(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = /^fencekit-[a-z-]+-(\d+)-\w+$/.exec(name)?.[1];
    if (owner === undefined || Number(owner) === process.pid) continue;
    try {
      process.kill(Number(owner), 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH')
        rmSync(join(base, name), { recursive: true, force: true });
    }
  }
}

/** tmpfs when there is one: etcd and ZooKeeper fsync, and the disk is shared with everyone's tests. */
function baseDir(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

export class LocalCluster implements Cluster {
  readonly provider = 'local';
  readonly faults: Faults & LocalFaults;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly topology: Topology,
    readonly recipe: LocalRecipe,
    readonly rootDir: string,
    readonly localNodes: readonly LocalNode[],
    readonly network: LocalNetwork,
  ) {
    this.faults = new LocalFaults(this);
  }

  get nodes(): readonly ClusterNode[] {
    return this.localNodes;
  }

  get endpoints(): readonly string[] {
    return this.localNodes.map((n) => n.endpoint);
  }

  node(id: string): LocalNode {
    const node = this.localNodes.find((n) => n.id === id);
    if (!node)
      throw new UnknownNodeError(
        String(id),
        this.localNodes.map((n) => n.id),
      );
    return node;
  }

  waitForLeader(options?: WaitForLeaderOptions): Promise<string> {
    return waitForLeader(() => this.leader(), options);
  }

  leader(): Promise<string | undefined> {
    return this.recipe.leader?.(this.localNodes.map(directTarget)) ?? Promise.resolve(undefined);
  }

  /** Waits (bounded) until `node` serves clients again; fails early if its process died. */
  async waitReady(
    node: LocalNode,
    timeoutMs = this.recipe.readyTimeoutMs,
    signal?: AbortSignal,
  ): Promise<void> {
    try {
      await poll(
        async () => {
          if (!node.process.running) throw new ExitedError();
          return (await this.recipe.ready(directTarget(node))) ? true : undefined;
        },
        { what: `${this.recipe.server} ${node.id} to serve`, timeoutMs, intervalMs: 200, signal },
      );
    } catch (error) {
      const reason = error instanceof ExitedError ? 'the process exited' : String((error as Error).message);
      throw new ClusterStartError(node.id, reason, node.process.logTail(), { cause: error });
    }
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.faults.dispose();
      await Promise.all(this.localNodes.map((n) => n.process.kill('SIGKILL').catch(() => undefined)));
      await this.network.close();
      rmSync(this.rootDir, { recursive: true, force: true });
      untrackDir(this.rootDir);
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  static async start(options: ResolvedOptions): Promise<LocalCluster> {
    const recipe = RECIPES[options.topology];
    sweepStaleDirs(baseDir());
    const rootDir = mkdtempSync(join(baseDir(), `fencekit-${options.topology}-${process.pid}-`));
    trackDir(rootDir);
    const ids = Array.from({ length: options.nodes }, (_, i) => `n${i + 1}`);
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
      advertisedClientPort: network.clientProxies.get(id)?.port ?? own(i)[0]!,
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
    const token = `fencekit-${randomBytes(6).toString('hex')}`;
    nodes = layouts.map((layout) => {
      const spec = recipe.launch(layout, layouts, token);
      mkdirSync(layout.dir, { recursive: true });
      for (const [name, content] of Object.entries(spec.files ?? {})) {
        const path = join(layout.dir, name);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, content);
      }
      const shim = recipe.clockShim ? clockShimPath() : undefined;
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
    try {
      // All members at once: etcd and ZooKeeper members wait for a quorum before they serve.
      for (const node of nodes) node.process.start();
      const deadline = AbortSignal.timeout(options.startTimeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
      await Promise.all(
        nodes.map((node) =>
          cluster.waitReady(node, Math.min(recipe.readyTimeoutMs, options.startTimeoutMs), signal),
        ),
      );
      return cluster;
    } catch (error) {
      await cluster.close();
      throw error;
    }
  }
}

class ExitedError extends Error {}

/** Probes bypass the client proxy: a fault on the clients' path must not make a server look down. */
function directTarget(node: LocalNode): ProbeTarget {
  return { id: node.id, host: '127.0.0.1', port: node.layout.clientPort };
}
