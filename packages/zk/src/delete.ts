import type { Client, ZkException } from 'node-zookeeper-client';
import { connectionOf, serverPath, stringBytes, type WireRequest, writeString } from './wire.js';

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
  const header = { xid: 0, type: DELETE };
  const request: WireRequest = {
    header,
    payload: null,
    toBuffer: () => {
      // Frame length; header (xid, opcode); DeleteRequest (path, version).
      const size = 8 + stringBytes(full) + 4;
      const buffer = Buffer.allocUnsafe(4 + size);
      buffer.writeInt32BE(size, 0);
      buffer.writeInt32BE(header.xid, 4);
      buffer.writeInt32BE(DELETE, 8);
      buffer.writeInt32BE(version, writeString(buffer, full, 12));
      return buffer;
    },
  };
  connection.queue(request, (error) => callback(error));
}
