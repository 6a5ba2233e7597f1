/// <reference path="./node-zookeeper-client.d.ts" preserve="true" />
import type { Client, Stat, ZkException } from 'node-zookeeper-client';
import {
  connectionOf,
  malformed,
  serverPath,
  stringBytes,
  type WireRequest,
  wireRequest,
  withoutChroot,
  writeString,
} from './wire.js';

/**
 * ZooKeeper's CREATE2 (opcode 15, servers ≥ 3.5): a create whose reply carries the new node's Stat,
 * czxid included. node-zookeeper-client 1.1.3 (pinned exactly in package.json) only sends CREATE (1),
 * whose reply is the path alone, so a recipe needing the fence had to spend a second op on it. This
 * sends CREATE2 through the library's own connection (`wire.ts`) with two small liberties:
 *
 * - The library decides how to decode a reply from the `type` of the request it sent, and knows no
 *   decoder for 15 (it would drop the socket). So the queued request's header says GET_DATA (4), while
 *   its `toBuffer` puts 15 on the wire. A CREATE2 reply is `ustring path, Stat stat` and a GET_DATA
 *   reply is `buffer data, Stat stat`: jute writes both string and buffer as an int32 length and the
 *   bytes, so the library's GET_DATA decoder reads our reply exactly, the path arriving as bytes.
 * - The request encodes itself (`encodeCreate2`), chroot included, rather than through the library's
 *   generic records, which walk a field specification per request (they were the largest part of an
 *   acquire's own CPU).
 *
 * `test/wire.integration.test.ts` checks against a real ensemble that the returned czxid is the one
 * `exists()` reports, for a sequential node, under a chroot, and for the error replies.
 */
export interface Created {
  /** The created node's path (with its sequence suffix), relative to the client's chroot. */
  path: string;
  stat: Stat;
}

const CREATE2 = 15;
/** The opcode the library is told it sent (its GET_DATA): it selects the decoder that reads the reply. */
const DECODE_AS = 4;
/**
 * The ACL every node gets, as jute encodes it: a vector of one entry, all permissions (31) for
 * world:anyone (the library's own `create` defaults to the same ACL.OPEN_ACL_UNSAFE).
 */
const OPEN_ACL = encodeOpenAcl();

/**
 * Sends one CREATE2 for `path` (with `OPEN_ACL`). The callback gets the library's exception for an
 * error reply (NODE_EXISTS, NO_NODE, CONNECTION_LOSS…) as `create` would.
 */
export function create2(
  client: Client,
  path: string,
  data: Buffer | null,
  mode: number,
  callback: (error: ZkException | null, created?: Created) => void,
): void {
  const connection = connectionOf(client);
  const chroot = connection.chrootPath;
  // No payload record: the request encodes itself (and its chroot), so the library has nothing to add.
  const request = encodeCreate2(serverPath(chroot, path), data, mode);
  connection.queue(request, (error, reply) => {
    if (error) return callback(error);
    const raw = reply?.payload?.data;
    const stat = reply?.payload?.stat;
    if (!raw || !stat) return callback(malformed('CREATE2'));
    callback(null, { path: withoutChroot(raw.toString('utf8'), chroot), stat });
  });
}

/**
 * One CREATE2 request, as jute lays it out: CreateRequest (path as int32 length + UTF-8, data as int32
 * length + bytes or -1, the ACL vector, flags), decoded as GET_DATA.
 */
function encodeCreate2(path: string, data: Buffer | null, flags: number): WireRequest {
  const bodyBytes = stringBytes(path) + 4 + (data?.length ?? 0) + OPEN_ACL.length + 4;
  return wireRequest(
    CREATE2,
    bodyBytes,
    (buffer, start) => {
      let at = writeString(buffer, path, start);
      at = buffer.writeInt32BE(data ? data.length : -1, at);
      if (data) at += data.copy(buffer, at);
      at += OPEN_ACL.copy(buffer, at);
      buffer.writeInt32BE(flags, at);
    },
    DECODE_AS,
  );
}

function encodeOpenAcl(): Buffer {
  const buffer = Buffer.alloc(4 + 4 + stringBytes('world') + stringBytes('anyone'));
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(31, 4);
  writeString(buffer, 'anyone', writeString(buffer, 'world', 8));
  return buffer;
}
