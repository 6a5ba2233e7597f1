// Runnable: ZK_SERVERS=127.0.0.1:2181 node examples/quickstart.mjs   (after `npx tsc -b packages/zk`)
import { ZkElection, ZkLockClient } from '@fencekit/zk';

const servers = process.env.ZK_SERVERS ?? '127.0.0.1:2181';
const locks = new ZkLockClient({ servers, sessionTimeoutMs: 30_000 });

// 1. A lock: fair, fenced by the lock node's czxid.
const lease = await locks.acquire('inventory/sku-42', { ttlMs: 5_000, waitMs: 10_000 });
console.log(`holding ${lease.resource} with fence ${lease.fence}`);

// 2. A fenced write: ZooKeeper applies it only while this very lock node exists (one multi: check + set).
const stock = '/shop/stock/sku-42';
await locks.session.mkdirp(stock);
await locks.guardedWrite(lease, stock, Buffer.from('41'));
await lease.release();
try {
  await locks.guardedWrite(lease, stock, Buffer.from('40')); // too late: the lock is gone
} catch (error) {
  console.log(`stale write refused by ZooKeeper: ${error.code}`);
}

// 3. An election: campaign, see who leads, watch changes, resign.
const election = new ZkElection('billing-primary', { servers, sessionTimeoutMs: 30_000 });
const watching = new AbortController();
const changes = (async () => {
  for await (const leader of election.observe({ signal: watching.signal })) {
    console.log(`leader is now ${leader ? `${leader.candidate} (term ${leader.term})` : 'nobody'}`);
  }
})();
const leadership = await election.campaign('node-a', { waitMs: 10_000 });
console.log(
  `elected: ${leadership.candidate}, term ${leadership.term}; current: ${(await election.leader())?.candidate}`,
);
await leadership.resign();
await new Promise((resolve) => setTimeout(resolve, 200));
watching.abort();
await changes;
await election.close();
await locks.close();
