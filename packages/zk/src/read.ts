import type { Client, Stat, Watcher, ZkException } from 'node-zookeeper-client';
import {
  connectionOf,
  malformed,
  serverPath,
  stringBytes,
  type WireRequest,
  wireRequest,
  writeString,
} from './wire.js';

const GET_DATA = 4;
const GET_CHILDREN2 = 12;

/** A folder's children (names relative to it) and its Stat. */
export interface Listing {
  children: string[];
  stat: Stat;
}

/** A node's data (null when it has none) and its Stat. */
export interface NodeData {
  data: Buffer | null;
  stat: Stat;
}

/**
 * ZooKeeper's GET_CHILDREN2 without a watch, encoded here and sent through node-zookeeper-client's
 * connection (see `wire.ts`); the library decodes the reply (children relative to the folder, and
 * its Stat) as for its own `getChildren`. A contended join pipelines one behind every create, so the
 * library's per-call path regular expressions, generic records and retry loop are worth skipping.
 * A listing that sets a watch still goes through the library, which registers the watcher.
 */
export function listChildren(
  client: Client,
  path: string,
  callback: (error: ZkException | null, listing?: Listing) => void,
): void {
  const connection = connectionOf(client);
  const full = serverPath(connection.chrootPath, path);
  connection.queue(pathRequest(GET_CHILDREN2, full, false), (error, reply) => {
    if (error) return callback(error);
    const stat = reply?.payload?.stat;
    if (!stat) return callback(malformed('GET_CHILDREN2'));
    callback(null, { children: reply?.payload?.children ?? [], stat });
  });
}

/**
 * ZooKeeper's GET_DATA, optionally setting a data watch, sent the same way. As the library's own
 * `getData` does, the watcher is registered with the library's watcher manager once the reply says the
 * node exists (a GET_DATA on a missing node leaves no watch on the server either), so the library
 * delivers the event and re-arms the watch after a reconnect as for its own watches.
 */
export function getData(
  client: Client,
  path: string,
  watcher: Watcher | undefined,
  callback: (error: ZkException | null, read?: NodeData) => void,
): void {
  const connection = connectionOf(client);
  const request = pathRequest(GET_DATA, serverPath(connection.chrootPath, path), watcher !== undefined);
  connection.queue(request, (error, reply) => {
    if (error) return callback(error);
    const stat = reply?.payload?.stat;
    if (!stat) return callback(malformed('GET_DATA'));
    if (watcher) connection.registerDataWatcher(path, watcher);
    callback(null, { data: reply?.payload?.data ?? null, stat });
  });
}

/** A request whose body is `path, watch` (GetDataRequest, GetChildren2Request). */
function pathRequest(type: number, path: string, watch: boolean): WireRequest {
  return wireRequest(type, stringBytes(path) + 1, (buffer, at) => {
    buffer.writeUInt8(watch ? 1 : 0, writeString(buffer, path, at));
  });
}
