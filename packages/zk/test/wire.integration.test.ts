/// <reference path="../src/node-zookeeper-client.d.ts" />
import { injectCluster } from '@fencekit/cluster/vitest';
import { isFencekitError } from '@fencekit/core';
import { ZkLockClient } from '@fencekit/zk';
import zookeeper, { type Client, type Stat, type ZkException } from 'node-zookeeper-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Created, create2 } from '../src/create2.js';
import { deleteNode } from '../src/delete.js';
import { getData, type Listing, listChildren, type NodeData } from '../src/read.js';
import { ZkCode } from '../src/zk-errors.js';
import { followerLagMs } from './support/ensemble.js';

const cluster = injectCluster('zookeeper');
const servers = cluster.endpoints.join(',');
const EPHEMERAL_SEQUENTIAL = 3;
const PERSISTENT = 0;

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((c) => c.close()));
});

function connect(connectionString = servers): Promise<Client> {
  const client = zookeeper.createClient(connectionString, { sessionTimeout: 4_000, retries: 0 });
  opened.push(client);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no session within 10 s')), 10_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.connect();
  });
}

function call<T>(run: (done: (error: ZkException | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    run((error, value) => (error ? reject(error) : resolve(value as T))),
  );
}

const created = (client: Client, path: string, mode = EPHEMERAL_SEQUENTIAL) =>
  call<Created>((done) => create2(client, path, null, mode, done));
const stat = (client: Client, path: string) =>
  call<Stat | null>((done) => client.exists(path, undefined, done));
const remove = (client: Client, path: string, version = -1) =>
  call<void>((done) => deleteNode(client, path, version, done));

function folder(label: string): string {
  return `/fencekit-test/create2-${label}-${Math.random().toString(36).slice(2)}`;
}

describe('CREATE2 through node-zookeeper-client', () => {
  it("answers with the node's path and Stat: czxid as exists() reports it, owned by our session", async () => {
    const client = await connect();
    const parent = folder('stat');
    await call((done) => client.mkdirp(parent, done));
    const first = await created(client, `${parent}/n-`);
    const second = await created(client, `${parent}/n-`);
    expect(first.path).toBe(`${parent}/n-0000000000`);
    expect(second.path).toBe(`${parent}/n-0000000001`);
    for (const node of [first, second]) {
      const seen = await stat(client, node.path);
      expect(seen?.czxid.equals(node.stat.czxid)).toBe(true);
      expect(node.stat.ephemeralOwner.equals(client.getSessionId())).toBe(true);
    }
    expect(second.stat.czxid.readBigInt64BE() > first.stat.czxid.readBigInt64BE()).toBe(true);
    // The connection carries on normally afterwards (the reply was decoded to its last byte).
    expect((await stat(client, '/'))?.numChildren).toBeGreaterThan(0);
  });

  it('reports error replies as the library does (NODE_EXISTS, NO_NODE)', async () => {
    const client = await connect();
    const parent = folder('errors');
    await call((done) => client.mkdirp(parent, done));
    await created(client, `${parent}/fixed`, PERSISTENT);
    const exists = await created(client, `${parent}/fixed`, PERSISTENT).catch((e: ZkException) => e);
    expect((exists as ZkException).getCode()).toBe(ZkCode.NODE_EXISTS);
    const missing = await created(client, `${parent}/nope/n-`).catch((e: ZkException) => e);
    expect((missing as ZkException).getCode()).toBe(ZkCode.NO_NODE);
  });

  it('works under a chroot: the path comes back relative to it', async () => {
    const plain = await connect();
    const root = folder('chroot');
    await call((done) => plain.mkdirp(`${root}/q`, done));
    const chrooted = await connect(`${cluster.endpoints[0]}${root}`);
    const node = await created(chrooted, '/q/n-');
    expect(node.path).toBe('/q/n-0000000000');
    expect((await stat(plain, `${root}${node.path}`))?.czxid.equals(node.stat.czxid)).toBe(true);
  });

  it("a folder's sequence counter moves on creates only (what the lock's one-request acquire relies on)", async () => {
    const client = await connect();
    const parent = folder('counter');
    await call((done) => client.mkdirp(parent, done));
    const first = await created(client, `${parent}/n-`);
    await remove(client, first.path);
    expect((await created(client, `${parent}/n-`)).path).toBe(`${parent}/n-0000000001`);
  });
});

describe('DELETE through node-zookeeper-client', () => {
  it('deletes the node, checks the version, reports NO_NODE, and works under a chroot', async () => {
    const plain = await connect();
    const root = folder('delete');
    await call((done) => plain.mkdirp(`${root}/q`, done));
    const node = await created(plain, `${root}/q/n-`);
    const wrongVersion = await remove(plain, node.path, 7).catch((e: ZkException) => e);
    expect((wrongVersion as ZkException).getCode()).toBe(ZkCode.BAD_VERSION);
    await remove(plain, node.path, 0);
    expect(await stat(plain, node.path)).toBeNull();
    const missing = await remove(plain, node.path).catch((e: ZkException) => e);
    expect((missing as ZkException).getCode()).toBe(ZkCode.NO_NODE);

    const chrooted = await connect(`${cluster.endpoints[0]}${root}`);
    const inside = await created(chrooted, '/q/n-');
    await remove(chrooted, inside.path);
    expect(await stat(plain, `${root}${inside.path}`)).toBeNull();
    // The connection carries on normally afterwards.
    expect((await stat(chrooted, '/q'))?.numChildren).toBe(0);
  });
});

describe('GET_CHILDREN2 (no watch) through node-zookeeper-client', () => {
  const list = (client: Client, path: string) => call<Listing>((done) => listChildren(client, path, done));

  it('lists as the library does, reports NO_NODE, and works under a chroot (root included)', async () => {
    const plain = await connect();
    const root = folder('list');
    await call((done) => plain.mkdirp(`${root}/q`, done));
    const nodes = [await created(plain, `${root}/q/n-`), await created(plain, `${root}/q/n-`)];
    const ours = await list(plain, `${root}/q`);
    const theirs = await call<string[]>((done) => plain.getChildren(`${root}/q`, undefined, done));
    expect(ours.children.sort()).toEqual(theirs.sort());
    expect(ours.children.sort()).toEqual(nodes.map((n) => n.path.slice(`${root}/q/`.length)));
    expect(ours.stat.numChildren).toBe(2);
    const missing = await list(plain, `${root}/nope`).catch((e: ZkException) => e);
    expect((missing as ZkException).getCode()).toBe(ZkCode.NO_NODE);

    const chrooted = await connect(`${cluster.endpoints[0]}${root}`);
    expect((await list(chrooted, '/q')).children.sort()).toEqual(theirs.sort());
    expect((await list(chrooted, '/')).children).toEqual(['q']);
  });
});

describe('GET_DATA (with or without a watch) through node-zookeeper-client', () => {
  const read = (client: Client, path: string, watcher?: (event: { type: number; path: string }) => void) =>
    call<NodeData>((done) => getData(client, path, watcher, done));

  it('reads data and Stat, and the watch fires on deletion, also under a chroot', async () => {
    const plain = await connect();
    const root = folder('read');
    await call((done) => plain.mkdirp(`${root}/q`, done));
    const data = Buffer.from('candidate-a');
    const node = await call<Created>((done) =>
      create2(plain, `${root}/q/n-`, data, EPHEMERAL_SEQUENTIAL, done),
    );
    const chrooted = await connect(`${cluster.endpoints[0]}${root}`);
    const relative = node.path.slice(root.length);
    const events: { type: number; path: string }[] = [];
    const plainRead = await read(plain, node.path, (event) => events.push(event));
    const chrootRead = await read(chrooted, relative, (event) => events.push(event));
    expect(plainRead.data?.toString()).toBe('candidate-a');
    expect(chrootRead.stat.czxid.equals(node.stat.czxid)).toBe(true);
    expect((await read(plain, node.path)).data?.toString()).toBe('candidate-a');
    await remove(plain, node.path);
    await expect.poll(() => events.length, { timeout: 5_000 }).toBe(2);
    expect(events.map((e) => [e.type, e.path]).sort()).toEqual(
      [
        [zookeeper.Event.NODE_DELETED, node.path],
        [zookeeper.Event.NODE_DELETED, relative],
      ].sort(),
    );
    const missing = await read(plain, node.path, () => {}).catch((e: ZkException) => e);
    expect((missing as ZkException).getCode()).toBe(ZkCode.NO_NODE);
  });
});

describe('ZkLockClient: the one-request acquire', () => {
  const lockClient = () => {
    const c = new ZkLockClient({ servers, sessionTimeoutMs: 4_000, followerLagMs });
    opened.push(c);
    return c;
  };
  const unique = (label: string) => `create2/${label}/${Math.random().toString(36).slice(2)}`;

  it('after a release that left the folder empty, the next acquire sends only its create', async () => {
    const a = lockClient();
    const resource = unique('alone');
    const first = await a.acquire(resource, { ttlMs: 5_000 });
    await first.release();
    const listings = vi.spyOn(a.session, 'children');
    const second = await a.acquire(resource, { ttlMs: 5_000 });
    expect(listings).not.toHaveBeenCalled();
    expect(second.fence > first.fence).toBe(true);
    const node = await a.session.exists(second.node);
    expect(node?.czxid.readBigInt64BE()).toBe(second.fence);
    await second.release();
  });

  it('a node created by someone else in between is noticed: no grant while another holds the lock', async () => {
    const [a, b] = [lockClient(), lockClient()];
    const resource = unique('interleaved');
    await (await a.acquire(resource, { ttlMs: 5_000 })).release();
    const held = await b.acquire(resource, { ttlMs: 5_000 });
    const refused = await a.acquire(resource, { ttlMs: 5_000, waitMs: 300 }).catch((e: unknown) => e);
    expect(isFencekitError(refused, 'timeout')).toBe(true);
    await held.release();
    const after = await a.acquire(resource, { ttlMs: 5_000 });
    expect(after.fence > held.fence).toBe(true);
    await after.release();
  });

  it('a create and delete by someone else in between costs a listing, not a wrong answer', async () => {
    const a = lockClient();
    const raw = await connect();
    const resource = unique('churn');
    const first = await a.acquire(resource, { ttlMs: 5_000 });
    await first.release();
    const other = await created(raw, `${a.folderOf(resource)}/_c_other-lock-`);
    await remove(raw, other.path);
    const listings = vi.spyOn(a.session, 'children');
    const second = await a.acquire(resource, { ttlMs: 5_000 });
    expect(listings).toHaveBeenCalledTimes(1);
    expect(second.fence > other.stat.czxid.readBigInt64BE()).toBe(true);
    await second.release();
  });
});
