// A lock holder in its own process, so a test can SIGKILL it like a crashed server.
// argv: <hosts comma-separated> <prefix> <resource> <ttlMs>. Prints one JSON line once it holds the lock.
import { EtcdClient } from '@fencekit/etcd';

const [hosts, prefix, resource, ttlMs] = process.argv.slice(2);
const client = new EtcdClient({ hosts: hosts.split(','), prefix });
const lease = await client.acquire(resource, { ttlMs: Number(ttlMs), waitMs: 20_000 });
process.stdout.write(`${JSON.stringify({ fence: String(lease.fence), grantedTtlMs: lease.grantedTtlMs })}\n`);
// Hold until killed; a bounded life in case the test runner dies first.
setTimeout(() => process.exit(0), 120_000);
