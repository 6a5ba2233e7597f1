import { execFileSync } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { dockerAvailable } from '@fencekit/cluster';
import { describe, expect, it } from 'vitest';
import { withCluster } from './support/cluster-scope.js';

/** `docker top`'s view of a container: the processes Docker sees in its cgroup, with their nice level. */
function dockerTop(containerId: string): { nice: number; args: string }[] {
  const out = execFileSync('docker', ['top', containerId, '-o', 'pid,ni,args'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return out
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [, nice, ...args] = line.trim().split(/\s+/);
      return { nice: Number(nice), args: args.join(' ') };
    });
}

const engine = await dockerAvailable();
const asRoot = process.getuid?.() === 0 && process.env.FENCEKIT_DOCKER_EXEC !== '1';
if (!engine || !asRoot)
  console.warn('[cluster] nsenter cgroup test SKIPPED: needs a Docker engine and root (nsenter)');

describe.skipIf(!engine || !asRoot)('docker provider: servers started through nsenter', () => {
  it("run in the container's cgroups at its nice level, not the caller's", () =>
    withCluster({ topology: 'redis', provider: 'docker' }, async (cluster) => {
      const containerId = cluster.nodes[0]!.containerId!;
      const before = getPriority();
      setPriority(before + 10); // this thread, and the processes it spawns from now on
      try {
        await cluster.faults.kill('n1');
        await cluster.faults.restart('n1'); // started again through nsenter, from a niced caller
      } finally {
        setPriority(before);
      }
      const top = dockerTop(containerId);
      const server = top.find((p) => p.args.includes('redis-server'));
      // Before the fix the server sat in our own cgroups: `docker top` listed only the container's init.
      expect(server, JSON.stringify(top)).toBeDefined();
      const init = top.find((p) => !p.args.includes('redis-server'))!;
      expect(server!.nice).toBe(init.nice);
    }));
});
