import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '../src/proxy/proxy.js';

/** The fault proxy against a plain echo server on loopback: each toxic's effect, and its removal. */

let echo: Server;
let echoPort: number;
let proxy: FaultProxy;
const sockets: Socket[] = [];

beforeEach(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => undefined); // resets are what some tests inject
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as { port: number }).port;
  proxy = await FaultProxy.listen({ name: 'test', upstreamHost: '127.0.0.1', upstreamPort: echoPort });
});

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await proxy.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

async function open(): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port: proxy.port });
  socket.on('error', () => undefined); // tests that expect an error listen for it themselves
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Sends `payload` and resolves with the ms until all of it came back, or rejects after `timeoutMs`. */
function roundTrip(socket: Socket, payload: Buffer, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let received = 0;
    const timer = setTimeout(() => {
      socket.off('data', onData);
      reject(new Error(`no echo within ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received >= payload.length) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(performance.now() - started);
      }
    };
    socket.on('data', onData);
    socket.write(payload);
  });
}

describe('FaultProxy', () => {
  it('forwards bytes both ways untouched without toxics', async () => {
    const socket = await open();
    const got = new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString())));
    socket.write('hello');
    expect(await got).toBe('hello');
  });

  it('latency applies per direction: upstream only adds it once per round trip', async () => {
    const socket = await open();
    proxy.addToxic({ type: 'latency', latencyMs: 80, direction: 'upstream' });
    expect(await roundTrip(socket, Buffer.from('x'))).toBeGreaterThanOrEqual(79);
    proxy.addToxic({ type: 'latency', latencyMs: 60, direction: 'downstream' });
    expect(await roundTrip(socket, Buffer.from('y'))).toBeGreaterThanOrEqual(139);
  });

  it('latency set twice replaces, and setToxics([]) removes it', async () => {
    const socket = await open();
    proxy.addToxic({ type: 'latency', latencyMs: 500 });
    proxy.addToxic({ type: 'latency', latencyMs: 50 });
    expect(proxy.activeToxics).toHaveLength(1);
    expect(await roundTrip(socket, Buffer.from('x'))).toBeGreaterThanOrEqual(99);
    proxy.setToxics([]);
    expect(await roundTrip(socket, Buffer.from('x'))).toBeLessThan(500);
  });

  it('bandwidth limits throughput', async () => {
    const socket = await open();
    proxy.addToxic({ type: 'bandwidth', rateKBps: 100, direction: 'downstream' });
    // 50 KB at 100 KB/s takes at least ~0.5 s.
    expect(await roundTrip(socket, Buffer.alloc(50 * 1024, 1))).toBeGreaterThanOrEqual(450);
  });

  it('a timeout toxic of 0 is a black hole: data is dropped while it is on', async () => {
    const socket = await open();
    proxy.addToxic({ type: 'timeout', timeoutMs: 0 });
    await expect(roundTrip(socket, Buffer.from('lost'), 300)).rejects.toThrow(/no echo/);
    proxy.setToxics([]);
    expect(await roundTrip(socket, Buffer.from('kept'))).toBeGreaterThanOrEqual(0);
  });

  it('a timeout toxic with a delay closes the connection after it', async () => {
    const socket = await open();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    proxy.addToxic({ type: 'timeout', timeoutMs: 100 });
    await closed;
  });

  it('reset_peer resets the client connection', async () => {
    const socket = await open();
    const error = new Promise<NodeJS.ErrnoException>((resolve) => socket.once('error', resolve));
    proxy.addToxic({ type: 'reset_peer', timeoutMs: 50 });
    expect((await error).code).toBe('ECONNRESET');
  });

  it('slow_close delays the close passed on to the other side', async () => {
    const socket = await open();
    await roundTrip(socket, Buffer.from('warm'));
    proxy.addToxic({ type: 'slow_close', delayMs: 300, direction: 'upstream' });
    const started = performance.now();
    const ended = new Promise<number>((resolve) =>
      socket.once('end', () => resolve(performance.now() - started)),
    );
    socket.end(); // the echo server ends its side only when our FIN reaches it
    expect(await ended).toBeGreaterThanOrEqual(290);
  });

  it('a cut holds data without loss until it is lifted', async () => {
    const socket = await open();
    proxy.setCut(() => true);
    const echoed = roundTrip(socket, Buffer.from('held'), 3000);
    await new Promise((r) => setTimeout(r, 300));
    proxy.setCut(() => false);
    expect(await echoed).toBeGreaterThanOrEqual(299);
  });

  it('a connection opened during a cut reaches the server only after it is lifted', async () => {
    let accepted = 0;
    echo.on('connection', () => accepted++);
    proxy.setCut(() => true);
    const socket = await open();
    await new Promise((r) => setTimeout(r, 200));
    expect(accepted).toBe(0);
    proxy.setCut(() => false);
    expect(await roundTrip(socket, Buffer.from('late'))).toBeGreaterThanOrEqual(0);
    expect(accepted).toBe(1);
  });

  it('rejects bad toxics with an error naming the field', () => {
    expect(() => proxy.addToxic({ type: 'latency', latencyMs: -1 })).toThrow(/toxic\.latencyMs/);
    expect(() => proxy.addToxic({ type: 'bandwidth', rateKBps: 0 })).toThrow(/toxic\.rateKBps/);
    expect(() => proxy.addToxic({ type: 'nope' } as never)).toThrow(/toxic\.type/);
  });
});
