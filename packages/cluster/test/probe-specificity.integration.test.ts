import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../src/index.js';

/**
 * #20 finding 3: the probes said "seen" for a server that was merely stopped by someone else (SIGSTOP by hand, no
 * fault of the controller applied): kill took a live stopped process for killed, cut-clients never asked the
 * server's own port, latency took "no answer" through the proxy for added latency when the server was just as
 * slow directly, and partition took a member that did not answer for one saying it has no leader. Real etcd.
 */
describe('the probes of a server stopped by someone else (no fault applied)', () => {
  let cluster: Cluster;
  let pid: number;
  beforeAll(async () => {
    cluster = await startCluster({ topology: 'etcd', nodes: 3, provider: 'local' });
    pid = Number(cluster.nodes.find((m) => m.id === 'n2')?.pid);
    process.kill(pid, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 300));
  }, 120_000);
  afterAll(async () => {
    // The pid is gone after the kill test (restarted under another).
    if (pid) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {}
    }
    await cluster?.close();
  }, 60_000);

  it.each([
    ['kill', 'n2'],
    ['cutClients', 'n2'],
    ['latency', 'n2'],
    ['partition', 'n1'],
  ] as const)(
    '%s is not seen',
    async (fault, node) => {
      const seen = await cluster.faults.observe({ fault, node, phase: 'started', timeoutMs: 1_500 });
      expect(seen.seen, seen.detail).toBe(false);
    },
    30_000,
  );

  it('kill is seen once the process is really gone', async () => {
    process.kill(pid, 'SIGCONT');
    await cluster.faults.kill('n2');
    const seen = await cluster.faults.observe({
      fault: 'kill',
      node: 'n2',
      phase: 'started',
      timeoutMs: 5_000,
    });
    expect(seen.seen, seen.detail).toBe(true);
    await cluster.faults.restart('n2');
    const healed = await cluster.faults.observe({
      fault: 'kill',
      node: 'n2',
      phase: 'healed',
      timeoutMs: 20_000,
    });
    expect(healed.seen, healed.detail).toBe(true);
  }, 60_000);
});
