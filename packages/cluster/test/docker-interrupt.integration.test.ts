import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dockerAvailable } from '@fencekit/cluster';
import { expect, it } from 'vitest';
import { leftovers } from './support/leftovers.js';

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const engine = await dockerAvailable();
if (!engine) console.warn('[cluster] docker-interrupt tests SKIPPED: no Docker engine answers `docker info`');

/**
 * A child starts a one-node Docker Redis from the built package and handles SIGINT itself, as the harness does
 * (heal, then tear down). After the signal it asks the node to serve and closes the cluster; it prints what it saw.
 */
const childScript = `
const { startCluster } = await import(${JSON.stringify(dist)});
const { connect } = await import('node:net');
const cluster = await startCluster({ topology: 'redis', provider: 'docker', proxy: false });
const ping = (endpoint) => new Promise((resolve) => {
  const [host, port] = endpoint.split(':');
  const socket = connect({ host, port: Number(port) });
  const timer = setTimeout(() => { socket.destroy(); resolve('no answer'); }, 5000);
  socket.once('connect', () => socket.write('PING\\r\\n'));
  socket.once('data', (d) => { clearTimeout(timer); socket.destroy(); resolve(String(d).trim()); });
  socket.once('error', (e) => { clearTimeout(timer); resolve(e.code ?? 'error'); });
});
process.on('SIGINT', async () => {
  const afterSignal = await ping(cluster.nodes[0].directEndpoint);
  let heal = 'ok';
  await cluster.faults.heal().catch((e) => { heal = e.message; });
  await cluster.close();
  process.stdout.write(JSON.stringify({ afterSignal, heal }) + '\\n');
  process.exit(130);
});
process.stdout.write(JSON.stringify({ containers: cluster.nodes.map((n) => n.containerId), network: cluster.networkId }) + '\\n');
setInterval(() => {}, 1000);
`;

/** The same start with no SIGINT handler of the process' own: the signal must end it and remove what it started. */
const unhandledScript = `
const { startCluster } = await import(${JSON.stringify(dist)});
const cluster = await startCluster({ topology: 'redis', provider: 'docker', proxy: false });
process.stdout.write(JSON.stringify({ containers: cluster.nodes.map((n) => n.containerId), network: cluster.networkId }) + '\\n');
setInterval(() => {}, 1000);
`;

function lines(child: ReturnType<typeof spawn>): AsyncGenerator<string> {
  child.stdout!.setEncoding('utf8');
  return (async function* () {
    let buffered = '';
    for await (const chunk of child.stdout!) {
      buffered += chunk;
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        yield buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
      }
    }
  })();
}

it.skipIf(!engine || !existsSync(dist))(
  'a SIGINT its process handles (the harness: heal, then tear down) leaves the containers serving until close()',
  async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    try {
      const read = lines(child);
      const started = JSON.parse((await read.next()).value as string) as {
        containers: string[];
        network: string;
      };
      child.kill('SIGINT');
      const after = JSON.parse((await read.next()).value as string) as { afterSignal: string; heal: string };
      // Removed at the signal, the node was gone before its owner's own teardown could heal it.
      expect(after).toEqual({ afterSignal: '+PONG', heal: 'ok' });
      await new Promise((resolve) => child.once('exit', resolve));
      expect(leftovers({ pids: [], dirs: [], ...started })).toEqual([]);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  },
  120_000,
);

it.skipIf(!engine || !existsSync(dist))(
  'a SIGINT nobody else handles ends the process and removes its containers and network',
  async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', unhandledScript], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    try {
      const started = JSON.parse((await lines(child).next()).value as string) as {
        containers: string[];
        network: string;
      };
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, signal) => resolve(signal)),
      );
      child.kill('SIGINT');
      // testcontainers' signal-exit listeners count themselves: taken for a handler, nothing ended the process.
      const signal = await Promise.race([
        exited,
        new Promise<string>((resolve) =>
          setTimeout(() => resolve('still running 20 s after SIGINT'), 20_000),
        ),
      ]);
      expect(signal).toBe('SIGINT');
      expect(leftovers({ pids: [], dirs: [], ...started })).toEqual([]);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  },
  120_000,
);
