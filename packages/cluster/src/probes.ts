import { request } from 'node:http';
import { connect } from 'node:net';

/**
 * Readiness probes speak each server's own wire protocol with a short timeout, so "ready" means the server
 * answers clients, not merely that its port is open.
 */

/** Sends `payload` to host:port and collects the reply until the server closes or `done` says it is complete. */
export function exchange(
  host: string,
  port: number,
  payload: string,
  timeoutMs: number,
  done: (reply: string) => boolean = () => false,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let reply = '';
    const finish = (error?: Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(reply);
    };
    const timer = setTimeout(
      () => finish(new Error(`no complete reply from ${host}:${port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (done(reply)) finish();
    });
    socket.on('end', () => finish());
    socket.on('error', (error) => finish(error));
  });
}

/** True when Redis answers PING with PONG (not LOADING or an error). */
export async function redisPing(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  const reply = await exchange(host, port, 'PING\r\n', timeoutMs, (r) => r.includes('\r\n'));
  return reply.startsWith('+PONG');
}

/** Redis' TIME in milliseconds: the server's wall clock (Redis reads gettimeofday), as a clock fault skews it. */
export async function redisTimeMs(host: string, port: number, timeoutMs = 1000): Promise<number> {
  const reply = await exchange(host, port, 'TIME\r\n', timeoutMs, (r) =>
    /^\*2\r\n(\$\d+\r\n\d+\r\n){2}/.test(r),
  );
  const [seconds, micros] = [...reply.matchAll(/\$\d+\r\n(\d+)\r\n/g)].map((m) => Number(m[1]));
  if (seconds === undefined || micros === undefined)
    throw new Error(`unexpected TIME reply: ${JSON.stringify(reply)}`);
  return seconds * 1000 + micros / 1000;
}

/** ZooKeeper's uptime (`mntr` zk_uptime, ms): read from the JVM's clock, so a clock fault shows in it. */
export async function zookeeperUptimeMs(host: string, port: number, timeoutMs = 1000): Promise<number> {
  const reply = await exchange(host, port, 'mntr', timeoutMs);
  const uptime = /^zk_uptime\s+(\d+)/m.exec(reply)?.[1];
  if (uptime === undefined) throw new Error('mntr gave no zk_uptime');
  return Number(uptime);
}

/**
 * Whether a linearizable read through this etcd member completes within `timeoutMs`: it needs the member to reach
 * a quorum (ReadIndex), so it hangs on a member cut off from the majority. Reads one key, writes nothing.
 */
export function etcdQuorumRead(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host, port, method: 'POST', path: '/v3/kv/range', timeout: timeoutMs, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy(new Error('etcd range timed out')));
    req.on('error', () => resolve(false));
    req.end(JSON.stringify({ key: Buffer.from('fencekit-probe').toString('base64') }));
  });
}

/**
 * Whether this ZooKeeper server opens a new session within `timeoutMs`. Creating a session is a transaction the
 * leader commits with a quorum, so a server cut off from the majority never answers (or closes). The session asks
 * for the shortest timeout and is left to expire: nothing else is written.
 */
export function zookeeperQuorumSession(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  // ConnectRequest: protocolVersion 0, lastZxidSeen 0, timeOut 1 ms (raised to the server's minimum), sessionId 0,
  // a 16-byte empty password, readOnly false; framed by its length.
  const body = Buffer.alloc(4 + 8 + 4 + 8 + 4 + 16 + 1);
  body.writeInt32BE(0, 0);
  body.writeBigInt64BE(0n, 4);
  body.writeInt32BE(1, 12);
  body.writeBigInt64BE(0n, 16);
  body.writeInt32BE(16, 24);
  const frame = Buffer.alloc(4);
  frame.writeInt32BE(body.length, 0);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let reply = Buffer.alloc(0);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('connect', () => socket.write(Buffer.concat([frame, body])));
    socket.on('data', (chunk: Buffer) => {
      reply = Buffer.concat([reply, chunk]);
      // ConnectResponse: length, protocolVersion, timeOut, sessionId (non-zero once the session exists), …
      if (reply.length >= 20) finish(reply.readBigInt64BE(12) !== 0n);
    });
    socket.on('end', () => finish(false));
    socket.on('error', () => finish(false));
  });
}

/** etcd's /health: true once the member has a leader and serves (it answers {"health":"true"}). */
export function etcdHealthy(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/health', timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve(res.statusCode === 200 && /"health"\s*:\s*"true"/.test(body)));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`etcd /health timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * ZooKeeper's `srvr` four-letter word: returns the `Mode:` (leader, follower, standalone) once the server
 * serves, or undefined while it is still electing (it answers "not currently serving requests").
 */
export async function zookeeperMode(
  host: string,
  port: number,
  timeoutMs = 1000,
): Promise<string | undefined> {
  const reply = await exchange(host, port, 'srvr', timeoutMs);
  return /^Mode: (\w+)/m.exec(reply)?.[1];
}
