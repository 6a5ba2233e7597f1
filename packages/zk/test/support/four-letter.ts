import { Socket } from 'node:net';

/** Sends a ZooKeeper four-letter command (`wchp`, `srvr`…) to `endpoint` and returns the answer. */
export function fourLetter(endpoint: string, command: string, timeoutMs = 2_000): Promise<string> {
  const [host, port] = endpoint.split(':');
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let reply = '';
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`${command} to ${endpoint}: no answer within ${timeoutMs} ms`));
    });
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      reply += chunk.toString();
    });
    socket.once('close', () => resolve(reply));
    socket.connect(Number(port), host ?? '127.0.0.1', () => socket.write(command));
  });
}

/** `wchp` parsed: watched path → number of sessions watching it. */
export async function watchesByPath(endpoint: string): Promise<Map<string, number>> {
  const watches = new Map<string, number>();
  let current: string | undefined;
  for (const line of (await fourLetter(endpoint, 'wchp')).split('\n')) {
    if (line.startsWith('/')) {
      current = line.trim();
      watches.set(current, 0);
    } else if (current && line.trim().startsWith('0x')) {
      watches.set(current, (watches.get(current) ?? 0) + 1);
    }
  }
  return watches;
}
