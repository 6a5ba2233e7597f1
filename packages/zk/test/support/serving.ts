import { Socket } from 'node:net';

/** True if the ZooKeeper server at `endpoint` serves clients (its `srvr` answer names a Mode). */
export function serving(endpoint: string, timeoutMs = 1_000): Promise<boolean> {
  const [host, port] = endpoint.split(':');
  return new Promise((resolve) => {
    const socket = new Socket();
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
    });
    socket.once('close', () => done(reply.includes('Mode: ')));
    socket.connect(Number(port), host ?? '127.0.0.1', () => socket.write('srvr'));
  });
}

/** Polls until `endpoint` stops serving; false if it still serves after `withinMs`. */
export async function stopsServing(endpoint: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!(await serving(endpoint))) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}
