import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const reset = fileURLToPath(new URL('../dist/proxy/reset.js', import.meta.url));

/**
 * The proxy ends a socket and then resets it when the far side's FIN and RST arrive in one tick (ZooKeeper
 * under clock faults). Resetting an ended socket fails in libuv and Node 20 never closes the handle, so
 * the process spins at exit. In a child process: it must exit by itself, promptly, with nothing left open.
 */
const childScript = `
import { connect, createServer } from 'node:net';
const { resetSocket } = await import(${JSON.stringify(reset)});
const server = createServer({ allowHalfOpen: true }, (socket) => {
  socket.on('error', () => undefined);
  socket.end();
  resetSocket(socket);
  server.close();
});
server.listen(0, '127.0.0.1', () => {
  const client = connect(server.address().port, '127.0.0.1');
  client.on('error', () => undefined);
  client.on('close', () => setImmediate(() => {
    process.stdout.write(JSON.stringify(process.getActiveResourcesInfo()));
  }));
});
`;

it.skipIf(!existsSync(reset))(
  'resetting a socket that already sent its FIN leaves no handle behind',
  async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(timer);
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(JSON.parse(output)).not.toContain('TCPSocketWrap');
  },
  20_000,
);
