/// <reference path="./node-zookeeper-client.d.ts" preserve="true" />
import zookeeper, { type Client, type Stat, type Watcher, type ZkException } from 'node-zookeeper-client';

/**
 * The part of node-zookeeper-client 1.1.3's connection (pinned exactly in package.json) through
 * which fencekit sends the requests it encodes itself (`create2.ts`, `delete.ts`, `read.ts`): the library still
 * assigns the xid, matches the reply to the request, decodes it, and fails pending requests when the
 * connection drops, exactly as for its own requests. `ZkSession` also reaches its socket and its
 * reconnect (see `session.ts`). Every use of the library's internals goes through `connectionOf`.
 */

/** What the connection queues: it sets `header.xid`, decodes the reply by `header.type`, sends `toBuffer()`. */
export interface WireRequest {
  header: { xid: number; type: number };
  /** Always null: with a payload record the library would add the chroot itself. */
  payload: null;
  toBuffer(): Buffer;
}

/**
 * A request framed as jute lays it out: int32 length; header (xid, `opcode`); a body of `bodyBytes`
 * written by `writeBody` from the offset it is given. The library sees `decodeAs` as the request's
 * type, which picks the decoder for its reply (the opcode itself unless a reply is decoded as another's).
 */
export function wireRequest(
  opcode: number,
  bodyBytes: number,
  writeBody: (buffer: Buffer, at: number) => void,
  decodeAs = opcode,
): WireRequest {
  // The library assigns `xid` before sending, so the buffer is built only then.
  const header = { xid: 0, type: decodeAs };
  return {
    header,
    payload: null,
    toBuffer: () => {
      const size = 8 + bodyBytes;
      const buffer = Buffer.allocUnsafe(4 + size);
      buffer.writeInt32BE(size, 0);
      buffer.writeInt32BE(header.xid, 4);
      buffer.writeInt32BE(opcode, 8);
      writeBody(buffer, 12);
      return buffer;
    },
  };
}

/**
 * The library's decoded reply, for the reply types used here (GET_DATA's: data and stat;
 * GET_CHILDREN2's: children and stat; DELETE's: none).
 */
export interface WireReply {
  payload?: { data?: Buffer; children?: string[]; stat?: Stat } | null;
}

interface ConnectionManager {
  chrootPath?: string | undefined;
  /** The current socket, absent between connections. */
  socket?: { destroy(): void; cork(): void; uncork(): void } | undefined;
  /** Opens the next connection: the library calls it from timers to reconnect. */
  connect(): void;
  /** The library's watcher manager, keyed by the path as the client names it (without chroot). */
  registerDataWatcher(path: string, watcher: Watcher): void;
  queue(request: WireRequest, callback: (error: ZkException | null, reply?: WireReply) => void): void;
}

export function connectionOf(client: Client): ConnectionManager {
  return (client as unknown as { connectionManager: ConnectionManager }).connectionManager;
}

/** `path` as the server knows it: under the client's chroot, if it has one (as the library does). */
export function serverPath(chroot: string | undefined, path: string): string {
  if (!chroot) return path;
  return path === '/' ? chroot : chroot + path;
}

/** The server answers with full paths; the library's own decoders strip the chroot the same way. */
export function withoutChroot(path: string, chroot: string | undefined): string {
  if (!chroot) return path;
  return path === chroot ? '/' : path.slice(chroot.length);
}

/** A reply that does not decode as `what`'s: connection loss, since the caller cannot tell what the server holds. */
export function malformed(what: string): ZkException {
  const error = new Error(`malformed ${what} reply`) as ZkException;
  error.code = zookeeper.Exception.CONNECTION_LOSS as number;
  error.getCode = () => error.code;
  return error;
}

/** The length jute's int32-prefixed UTF-8 string takes for `text`. */
export function stringBytes(text: string): number {
  return 4 + Buffer.byteLength(text);
}

/** Writes `text` as jute does (int32 byte length, then UTF-8); returns the offset after it. */
export function writeString(buffer: Buffer, text: string, at: number): number {
  const written = buffer.write(text, at + 4, 'utf8');
  buffer.writeInt32BE(written, at);
  return at + 4 + written;
}
