import type { Client, Stat, ZkException } from 'node-zookeeper-client';
import { connectionOf, serverPath, stringBytes, type WireRequest, writeString } from './wire.js';

const GET_CHILDREN2 = 12;

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
  callback: (error: ZkException | null, children?: string[], stat?: Stat) => void,
): void {
  const connection = connectionOf(client);
  const full = serverPath(connection.chrootPath, path);
  const header = { xid: 0, type: GET_CHILDREN2 };
  const request: WireRequest = {
    header,
    payload: null,
    toBuffer: () => {
      // Frame length; header (xid, opcode); GetChildren2Request (path, watch = false).
      const size = 8 + stringBytes(full) + 1;
      const buffer = Buffer.allocUnsafe(4 + size);
      buffer.writeInt32BE(size, 0);
      buffer.writeInt32BE(header.xid, 4);
      buffer.writeInt32BE(GET_CHILDREN2, 8);
      buffer.writeUInt8(0, writeString(buffer, full, 12));
      return buffer;
    },
  };
  connection.queue(request, (error, reply) => {
    if (error) return callback(error);
    const children = reply?.payload?.children;
    const stat = reply?.payload?.stat;
    if (!stat) return callback(malformed());
    callback(null, children ?? [], stat);
  });
}

function malformed(): ZkException {
  const error = new Error('malformed GET_CHILDREN2 reply') as ZkException;
  error.code = -4; // CONNECTION_LOSS: the caller cannot tell what the server holds
  error.getCode = () => error.code;
  return error;
}
