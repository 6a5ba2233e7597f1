// Client CPU and redis-server CPU per uncontended acquire+release pair (issue #19), contenders
// interleaved in slices on one private redis-server. Usage: node bench/semaphore-cpu.mjs <rounds> <sliceMs> [oldDistDir]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisSharedLockClient } from '../dist/index.js';

const rounds = Number(process.argv[2] ?? 7);
const sliceMs = Number(process.argv[3] ?? 300);
const oldDir = process.argv[4];
const port = 20000 + Math.floor(Math.random() * 10000);
const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
  stdio: 'ignore',
});
await sleep(300);
const url = `redis://127.0.0.1:${port}`;
const info = new Redis(url);
const cpuOf = async () => {
  const text = await info.info('cpu');
  const f = (k) => Number(new RegExp(`${k}:([0-9.]+)`).exec(text)[1]);
  return (f('used_cpu_sys') + f('used_cpu_user')) * 1e6;
};
const floorLua = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;
function floor() {
  const redis = new Redis(url);
  redis.defineCommand('benchAcquire', { numberOfKeys: 1, lua: floorLua });
  return {
    name: 'floor',
    async pair(resource) {
      const owner = randomUUID();
      const now = Date.now();
      if ((await redis.benchAcquire(resource, 4, owner, now, now + 10000, 10000)) !== 1)
        throw new Error('full');
      await redis.zrem(resource, owner);
    },
    close: () => redis.quit(),
  };
}
function fencekit(name, Client) {
  const client = new Client({ connection: url });
  return {
    name,
    async pair(resource) {
      const lease = await client.semaphore(resource, { permits: 4 }).acquire({ ttlMs: 10000, waitMs: 5000 });
      await lease.release();
    },
    close: () => client.close(),
  };
}
const contenders = [floor(), fencekit('new', RedisSharedLockClient)];
if (oldDir) contenders.push(fencekit('old', (await import(`${oldDir}/index.js`)).RedisSharedLockClient));
const stats = new Map(contenders.map((c) => [c.name, { client: [], server: [] }]));
const resource = (c) => `cpu-${c.name}-${port}`;
for (const c of contenders) for (let i = 0; i < 2000; i++) await c.pair(resource(c)); // warm-up
console.log(
  `load at start: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? contenders : [...contenders].reverse();
  const acc = new Map(contenders.map((c) => [c.name, { n: 0, client: 0, server: 0 }]));
  for (let slice = 0; slice < 3; slice++) {
    for (const c of order) {
      const a = acc.get(c.name);
      const s0 = await cpuOf();
      const c0 = process.cpuUsage();
      const end = performance.now() + sliceMs;
      let n = 0;
      while (performance.now() < end) {
        for (let i = 0; i < 50; i++) await c.pair(resource(c));
        n += 50;
      }
      const c1 = process.cpuUsage(c0);
      const s1 = await cpuOf();
      a.n += n;
      a.client += c1.user + c1.system;
      a.server += s1 - s0;
    }
  }
  for (const [name, a] of acc) {
    stats.get(name).client.push(a.client / a.n);
    stats.get(name).server.push(a.server / a.n);
  }
  console.log(
    `round ${round}: ` +
      [...acc]
        .map(([n, a]) => `${n} ${(a.client / a.n).toFixed(1)}/${(a.server / a.n).toFixed(1)}`)
        .join('  '),
  );
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rng = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
for (const [name, s] of stats) {
  console.log(
    `${name.padEnd(6)} client µs/pair ${med(s.client).toFixed(1)} (${rng(s.client)})  redis µs/pair ${med(s.server).toFixed(1)} (${rng(s.server)})`,
  );
}
// Per-round differences to the floor: the rounds' common swings (load, frequency) cancel.
const floorStats = stats.get('floor');
for (const [name, s] of stats) {
  if (name === 'floor') continue;
  const dc = s.client.map((x, i) => x - floorStats.client[i]);
  const ds = s.server.map((x, i) => x - floorStats.server[i]);
  console.log(
    `${name.padEnd(6)} over the floor, per round: client +${med(dc).toFixed(1)} (${rng(dc)})  redis +${med(ds).toFixed(1)} (${rng(ds)})`,
  );
}
console.log(
  `load at end: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
for (const c of contenders) await c.close();
await info.quit();
server.kill();
