// Uses every part of the client, closes it, and must then exit on its own: nothing (timer, socket,
// keep-alive stream, watch) may keep the event loop alive. argv: <hosts comma-separated> <prefix>.
import { EtcdClient } from '@fencekit/etcd';

const [hosts, prefix] = process.argv.slice(2);
const client = new EtcdClient({ hosts: hosts.split(','), prefix });
const other = new EtcdClient({ hosts: hosts.split(','), prefix });
const lease = await client.acquire('exit', { ttlMs: 2_000 });
await other.acquire('exit', { ttlMs: 2_000, waitMs: 100 }).catch(() => undefined);
const election = other.election('exit', { ttlMs: 2_000 });
const watching = new AbortController();
const observed = (async () => {
  for await (const _leader of election.observe({ signal: watching.signal }));
})();
const leadership = await election.campaign('me');
await leadership.proclaim('value');
// A lease whose short extend lapses: its key is withdrawn in the background.
const lapsing = await client.acquire('exit-3', { ttlMs: 2_000 });
await lapsing.extend(300);
await new Promise((resolve) => setTimeout(resolve, 500));
// Close with things still held, watched and waited for: close() must clean all of it up.
await client.acquire('exit-2', { ttlMs: 2_000 });
const pending = other.acquire('exit-2', { ttlMs: 2_000, waitMs: 30_000 }).catch(() => undefined);
await new Promise((resolve) => setTimeout(resolve, 200));
await Promise.all([client.close(), other.close()]);
await pending;
watching.abort();
await observed.catch(() => undefined);
void lease;
process.stdout.write('closed\n');
