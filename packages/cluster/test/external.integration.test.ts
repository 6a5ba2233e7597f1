import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import {
  attachCluster,
  type Cluster,
  EndpointUnreachableError,
  InvalidArgumentError,
  ServerFaultRefusedError,
  startCluster,
} from '@fencekit/cluster';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Whether something accepts a TCP connection at host:port (a closed proxy does not). */
function accepts(endpoint: string): Promise<boolean> {
  const [host, port] = endpoint.split(':') as [string, string];
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.on('connect', () => done(true));
    socket.on('error', () => done(false));
  });
}

describe('external provider: servers fencekit does not control', () => {
  // The servers "someone else runs": a local etcd started without our proxy, attached to by its own endpoint.
  let servers: Cluster;
  let direct: Etcd3;
  beforeAll(async () => {
    servers = await startCluster({ topology: 'etcd', nodes: 1 });
    direct = new Etcd3({ hosts: servers.nodes.map((n) => `http://${n.directEndpoint}`) });
    await direct.put('owner/keep').value('theirs');
  }, 90_000);
  afterAll(async () => {
    direct?.close();
    await servers?.close();
  });

  it('refuses bad endpoint lists and topologies whose clients would bypass the proxy', async () => {
    for (const endpoints of [
      [],
      ['http://127.0.0.1:2379'],
      ['127.0.0.1:0'],
      ['127.0.0.1'],
      ['a:1', 'a:1'],
      ['u@h:1'],
    ]) {
      await expect(attachCluster({ topology: 'etcd', endpoints })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    await expect(attachCluster({ topology: 'redis-sentinel', endpoints: ['127.0.0.1:1'] })).rejects.toThrow(
      /Sentinels announce/,
    );
    await expect(
      attachCluster({ topology: 'redis', endpoints: ['127.0.0.1:1', '127.0.0.1:2'] }),
    ).rejects.toThrow(/one endpoint/);
  });

  it('says which endpoint does not serve, within its bound', async () => {
    // A port nothing listens on: the server's own readiness request never succeeds.
    const probe = await startCluster({ topology: 'redis' });
    const freed = probe.nodes[0]!.directEndpoint;
    await probe.close();
    const error = await attachCluster({ topology: 'redis', endpoints: [freed], readyTimeoutMs: 600 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EndpointUnreachableError);
    expect((error as EndpointUnreachableError).endpoint).toBe(freed);
  });

  it('a failed attach leaves no wait behind: the other endpoints stop being probed before it rejects', async () => {
    // One endpoint refuses at once (probed again and again until the bound), the other accepts and never answers
    // (each probe waits its whole 1 s): the first gives up while the second's probe is still in flight.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const refusing = createServer();
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const port = (s: Server) => (s.address() as AddressInfo).port;
    const closed = `127.0.0.1:${port(refusing)}`;
    await new Promise((resolve) => refusing.close(resolve));
    const open = () =>
      process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'TCPSocketWrap').length;
    const baseline = open();
    try {
      const error = await attachCluster({
        topology: 'etcd',
        endpoints: [closed, `127.0.0.1:${port(silent)}`],
        readyTimeoutMs: 400,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EndpointUnreachableError);
      expect((error as EndpointUnreachableError).endpoint).toBe(closed);
      expect(open()).toBe(baseline);
    } finally {
      silent.close();
    }
  });

  it('faults the clients’ path only, refuses every server fault by name, and leaves the servers as they were', async () => {
    const target = servers.nodes[0]!.directEndpoint;
    const cluster = await attachCluster({ topology: 'etcd', endpoints: [target] });
    try {
      expect(cluster.provider).toBe('external');
      expect(cluster.nodes.map((n) => [n.id, n.directEndpoint])).toEqual([['n1', target]]);
      expect(cluster.endpoints[0]).not.toBe(target);
      expect(await cluster.leader()).toBe('n1');

      const { faults } = cluster;
      const refused: [string, () => Promise<unknown>][] = [
        ['kill', () => faults.kill('n1')],
        ['restart', () => faults.restart('n1')],
        ['pause', () => faults.pause('n1')],
        ['resume', () => faults.resume('n1')],
        ['partition', () => faults.partition({ isolate: 'n1' })],
        ['clock', () => faults.clock('n1', { offsetMs: 1_000 })],
        ['failover', () => faults.failover()],
        ['splitBrain', () => faults.splitBrain()],
        ['kill', () => faults.observe({ fault: 'kill', node: 'n1', phase: 'started' })],
      ];
      for (const [fault, call] of refused) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ServerFaultRefusedError);
        expect((error as ServerFaultRefusedError).fault).toBe(fault);
        expect((error as Error).message).toContain(`"${fault}"`);
      }

      // Client-side faults act through the proxy while the server itself still answers.
      await faults.cutClients('n1');
      expect(
        await faults.observe({ fault: 'cutClients', node: 'n1', phase: 'started', timeoutMs: 10_000 }),
      ).toMatchObject({ seen: true });
      await faults.heal();
      expect(
        await faults.observe({ fault: 'cutClients', node: 'n1', phase: 'healed', timeoutMs: 10_000 }),
      ).toMatchObject({ seen: true });
      await faults.latency('n1', { ms: 150 });
      expect(
        await faults.observe({ fault: 'latency', node: 'n1', phase: 'started', timeoutMs: 10_000 }),
      ).toMatchObject({ seen: true });
      await faults.heal();

      // A client through the proxy works; the key someone else owns was never touched.
      const viaProxy = new Etcd3({ hosts: [`http://${cluster.endpoints[0]}`] });
      try {
        expect(await viaProxy.get('owner/keep').string()).toBe('theirs');
      } finally {
        viaProxy.close();
      }
    } finally {
      await cluster.close();
      await cluster.close(); // idempotent
    }
    // Closing closed our proxy and nothing else: the server still serves and still has its key.
    expect(await accepts(cluster.endpoints[0]!)).toBe(false);
    expect(await direct.get('owner/keep').string()).toBe('theirs');
    expect(
      await servers.faults.observe({ fault: 'kill', node: 'n1', phase: 'started', timeoutMs: 300 }),
    ).toMatchObject({
      seen: false,
    });
  });
});
