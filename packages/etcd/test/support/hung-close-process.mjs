// Clients that hold, wait and release while the test SIGSTOPs one member, then close() on a line from
// stdin and must exit on their own right after: nothing they opened towards the hung member (a watch or
// keep-alive stream, a unary call, a channel, a timer) may keep the event loop alive until it resumes.
// argv: <hosts comma-separated> <prefix>. stdout: "ready", then "closed" once every close() resolved.
import { createInterface } from 'node:readline';
import { EtcdClient } from '@fencekit/etcd';

const [hosts, prefix] = process.argv.slice(2);
// Several clients, so that some stream or call of one of them runs through the member that is stopped
// (etcd3 picks a member at random per channel use).
const clients = Array.from(
  { length: 6 },
  () => new EtcdClient({ hosts: hosts.split(','), prefix, callTimeoutMs: 1_000 }),
);
const [holder, ...others] = clients;
await holder.acquire('hung', { ttlMs: 3_000 });
const waiting = others.map((c) => c.acquire('hung', { ttlMs: 3_000, waitMs: 60_000 }).catch(() => undefined));
const own = await Promise.all(others.map((c, i) => c.acquire(`own-${i}`, { ttlMs: 3_000 })));
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
process.stdin.destroy();
// Requests now, with the member stopped: each one that lands there times out and etcd3 drops that
// member's channels and dials it again — a connection whose HTTP/2 handshake never completes.
await Promise.allSettled(
  clients.flatMap((c) => Array.from({ length: 4 }, () => c.etcd.get(`${prefix}/probe`).string())),
);
// Mid-release on some, holding on others, waiting on the rest: close() must end all of it.
void Promise.allSettled(own.slice(0, 2).map((l) => l.release()));
await Promise.all(clients.map((c) => c.close()));
process.stdout.write('closed\n');
await Promise.allSettled(waiting);
