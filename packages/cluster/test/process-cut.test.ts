import { execFile } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callerFault } from '../src/proxy/caller.js';
import { FaultProxy } from '../src/proxy/proxy.js';

/**
 * Faults on one calling process (`Faults.cutProcess`): the proxy tells connections apart by the process that
 * opened them (/proc), so this process's links are held or reset while another process's go through.
 */

let echo: Server;
let proxy: FaultProxy;
const sockets: Socket[] = [];

beforeEach(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const upstreamPort = (echo.address() as { port: number }).port;
  proxy = await FaultProxy.listen({ name: 'test', upstreamHost: '127.0.0.1', upstreamPort });
});

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await proxy.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

async function open(): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port: proxy.port });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined);
  return socket;
}

/** Resolves with what came back within `timeoutMs` (possibly nothing) and whether the socket was reset. */
function echoed(
  socket: Socket,
  payload: string,
  timeoutMs: number,
): Promise<{ data: string; reset: boolean }> {
  return new Promise((resolve) => {
    let data = '';
    let reset = false;
    const onData = (chunk: Buffer) => {
      data += chunk.toString();
      if (data.length >= payload.length) done();
    };
    const onError = (error: NodeJS.ErrnoException) => {
      reset = error.code === 'ECONNRESET';
      done();
    };
    const timer = setTimeout(() => done(), timeoutMs);
    function done() {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      resolve({ data, reset });
    }
    socket.on('data', onData);
    socket.on('error', onError);
    if (!socket.destroyed) socket.write(payload);
  });
}

/** Another process's round trip through the proxy: prints what came back. */
function otherProcessEcho(port: number): Promise<string> {
  const script = `const s=require('node:net').connect(${port},'127.0.0.1',()=>s.write('other'));let d='';s.on('data',c=>{d+=c;if(d.length>=5){process.stdout.write(d);s.destroy()}});s.on('error',e=>{process.stdout.write('error '+e.code)});setTimeout(()=>{process.stdout.write('timeout');process.exit(0)},5000).unref()`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script], { timeout: 10_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });
}

describe('a fault on one calling process', () => {
  it('holds this process’s open and new connections, not another process’s, and lets the bytes through on heal', async () => {
    const before = await open();
    expect((await echoed(before, 'a', 5_000)).data).toBe('a');
    expect(await proxy.setCallerFault(callerFault(process.pid, false))).toBe(1);
    expect((await echoed(before, 'b', 300)).data).toBe('');
    const opened = await open();
    expect((await echoed(opened, 'c', 300)).data).toBe('');
    expect(await otherProcessEcho(proxy.port)).toBe('other');
    const held = [echoed(before, '', 5_000), echoed(opened, '', 5_000)];
    await proxy.setCallerFault(undefined);
    const [b, c] = await Promise.all(held);
    expect(b?.data).toBe('b');
    expect(c?.data).toBe('c');
  });

  it('resets this process’s open and new connections, not another process’s, until healed', async () => {
    const before = await open();
    const resetSeen = new Promise<boolean>((resolve) => before.once('error', () => resolve(true)));
    expect(await proxy.setCallerFault(callerFault(process.pid, true))).toBe(1);
    expect(await resetSeen).toBe(true);
    // Reset as soon as the proxy has placed it: before or after the client saw it connect.
    const socket = connect({ host: '127.0.0.1', port: proxy.port });
    sockets.push(socket);
    const reset = await new Promise<boolean>((resolve) => {
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNRESET'));
      socket.once('connect', () => socket.write('x'));
      socket.once('data', () => resolve(false));
      setTimeout(() => resolve(false), 5_000).unref();
    });
    expect(reset).toBe(true);
    expect(await otherProcessEcho(proxy.port)).toBe('other');
    await proxy.setCallerFault(undefined);
    const after = await open();
    expect((await echoed(after, 'y', 5_000)).data).toBe('y');
  });
});
