// Lock, fenced write and election against a running etcd.
//   ETCD_ENDPOINTS=127.0.0.1:2379 node packages/etcd/examples/quickstart.mjs
import { EtcdClient, guardedPut } from '@fencekit/etcd';

const hosts = (process.env.ETCD_ENDPOINTS ?? '127.0.0.1:2379').split(',');
const client = new EtcdClient({ hosts, prefix: 'quickstart' });

try {
  // 1. A lock: waits (fairly, FIFO) up to waitMs; the fence is the lock key's create revision.
  const lease = await client.acquire('inventory/sku-42', { ttlMs: 5_000, waitMs: 10_000 });
  console.log(`holding ${lease.resource} with fence ${lease.fence}`);

  // 2. A fenced write: etcd applies it only while this lease's key still exists with this fence.
  await guardedPut(lease, 'quickstart/stock/sku-42', '41');
  await lease.release();
  try {
    await guardedPut(lease, 'quickstart/stock/sku-42', '40');
  } catch (error) {
    console.log(`after release etcd refuses the write: ${error.code}`); // stale-fence
  }

  // 3. An election: campaign, proclaim, observe, resign.
  const election = client.election('primary', { ttlMs: 5_000 });
  const watching = new AbortController();
  const seen = (async () => {
    for await (const leader of election.observe({ signal: watching.signal })) {
      console.log(
        'leader is now',
        leader ? `${leader.candidate} (term ${leader.term}, "${leader.value}")` : 'nobody',
      );
    }
  })();
  const leadership = await election.campaign('server-a', { waitMs: 10_000 });
  await leadership.proclaim('serving at 10.0.0.7');
  await new Promise((resolve) => setTimeout(resolve, 200));
  await leadership.resign();
  await new Promise((resolve) => setTimeout(resolve, 200));
  watching.abort();
  await seen;
} finally {
  await client.close();
}
