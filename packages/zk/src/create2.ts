/// <reference path="./node-zookeeper-client.d.ts" preserve="true" />
import zookeeper, { type Client, type Stat, type ZkException } from 'node-zookeeper-client';
import jute, { type JuteRequest } from 'node-zookeeper-client/lib/jute/index.js';

/**
 * ZooKeeper's CREATE2 (opcode 15, servers ≥ 3.5): a create whose reply carries the new node's Stat,
 * czxid included. node-zookeeper-client 1.1.3 (pinned exactly in package.json) only sends CREATE (1),
 * whose reply is the path alone, so a recipe needing the fence had to spend a second op on it. This
 * sends CREATE2 through the library's own connection (its queue, xids, pending replies, reconnect
 * and chroot handling) with two small liberties, both confined to this file:
 *
 * - The library decides how to decode a reply from the `type` of the request it sent, and knows no
 *   decoder for 15 (it would drop the socket). So the queued request's header says GET_DATA (4), while
 *   its `toBuffer` puts 15 on the wire. A CREATE2 reply is `ustring path, Stat stat` and a GET_DATA
 *   reply is `buffer data, Stat stat`: jute writes both string and buffer as an int32 length and the
 *   bytes, so the library's GET_DATA decoder reads our reply exactly, the path arriving as bytes.
 * - `connectionManager.queue` is the library's internal entry point (its public `create` goes through
 *   it the same way, minus its retry loop: fencekit's sessions run with `retries: 0` and retry above).
 *
 * `test/create2.integration.test.ts` checks against a real ensemble that the returned czxid is the one
 * `exists()` reports, for a sequential node, under a chroot, and for the error replies.
 */
export interface Created {
  /** The created node's path (with its sequence suffix), relative to the client's chroot. */
  path: string;
  stat: Stat;
}

const CREATE2 = 15;
/** The opcode the library is told it sent: it selects the decoder that reads a CREATE2 reply. */
const DECODE_AS = jute.OP_CODES.GET_DATA;
const OPEN_ACL = zookeeper.ACL.OPEN_ACL_UNSAFE.map((acl) => acl.toRecord());

interface ConnectionManager {
  chrootPath?: string | undefined;
  queue(
    request: JuteRequest,
    callback: (error: ZkException | null, response?: { payload?: { data?: Buffer; stat?: Stat } }) => void,
  ): void;
}

/**
 * Sends one CREATE2 for `path` (open ACL, as the library's own `create` defaults to). The callback gets
 * the library's exception for an error reply (NODE_EXISTS, NO_NODE, CONNECTION_LOSS…) as `create` would.
 */
export function create2(
  client: Client,
  path: string,
  data: Buffer | null,
  mode: number,
  callback: (error: ZkException | null, created?: Created) => void,
): void {
  const manager = (client as unknown as { connectionManager: ConnectionManager }).connectionManager;
  const payload = new jute.protocol.CreateRequest();
  payload.path = path;
  payload.data = data ?? undefined;
  payload.acl = OPEN_ACL;
  payload.flags = mode;
  // The header the library keeps: it assigns `xid` before sending and reads `type` to decode the reply.
  const header = { xid: 0, type: DECODE_AS };
  const request: JuteRequest = {
    header,
    payload,
    toBuffer: () =>
      new jute.Request(new jute.protocol.RequestHeader(header.xid, CREATE2), payload).toBuffer(),
  };
  manager.queue(request, (error, response) => {
    if (error) return callback(error);
    const raw = response?.payload?.data;
    const stat = response?.payload?.stat;
    if (!raw || !stat) return callback(malformed());
    callback(null, { path: withoutChroot(raw.toString('utf8'), manager.chrootPath), stat });
  });
}

/** The server answers with the full path; the library's own decoders strip the chroot the same way. */
function withoutChroot(path: string, chroot: string | undefined): string {
  if (!chroot) return path;
  return path === chroot ? '/' : path.slice(chroot.length);
}

function malformed(): ZkException {
  const error = new Error('malformed CREATE2 reply') as ZkException;
  error.code = zookeeper.Exception.CONNECTION_LOSS as number;
  error.getCode = () => error.code;
  return error;
}
