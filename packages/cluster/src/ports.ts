import { createServer, type Server } from 'node:net';

/**
 * Reserves `count` distinct free TCP ports on 127.0.0.1 by holding listeners open until all are known, then
 * releasing them for the servers to bind. Another process may still grab one in between; startCluster's
 * retry on fresh ports covers that rare race.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('listener has no TCP address');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
