import type { Client, ZkException } from 'node-zookeeper-client';
import { connectionOf, serverPath, stringBytes, wireRequest, writeString } from './wire.js';

const DELETE = 2;

/**
 * ZooKeeper's DELETE, encoded here and sent through node-zookeeper-client's connection (see
 * `wire.ts`). The library's `remove` sends the same request, but validates the path with regular
 * expressions and runs every call through its retry loop (the `async` package), which fencekit does
 * not use (`retries: 0`, it retries above): together the largest part of a release's client CPU.
 * The reply has no body; an error reply (NO_NODE, BAD_VERSION…) comes back as the library's exception.
 */
export function deleteNode(
  client: Client,
  path: string,
  version: number,
  callback: (error: ZkException | null) => void,
): void {
  const connection = connectionOf(client);
  const full = serverPath(connection.chrootPath, path);
  // DeleteRequest: path, version.
  const request = wireRequest(DELETE, stringBytes(full) + 4, (buffer, at) => {
    buffer.writeInt32BE(version, writeString(buffer, full, at));
  });
  connection.queue(request, (error) => callback(error));
}
