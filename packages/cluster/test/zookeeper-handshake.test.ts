import { describe, expect, it } from 'vitest';
import { electionHandshakeRewriter } from '../src/local/zookeeper.js';

/** QuorumCnxManager's InitialMessage: long protocol version, long sid, int length, address bytes. */
function initialMessage(protocol: bigint, sid: bigint, address: string, trailer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(20);
  head.writeBigInt64BE(protocol, 0);
  head.writeBigInt64BE(sid, 8);
  const body = Buffer.from(address);
  head.writeInt32BE(body.length, 16);
  return Buffer.concat([head, body, trailer]);
}

describe('ZooKeeper election handshake rewrite', () => {
  const rewrite = electionHandshakeRewriter(new Map([['127.0.0.1:40001', '127.0.0.1:5002']]));

  it("replaces the caller's real election address with its proxy, fixing the length", () => {
    const out = rewrite(initialMessage(-65536n, 2n, '127.0.0.1:40001', Buffer.from('rest')));
    expect(out.readBigInt64BE(8)).toBe(2n);
    const length = out.readInt32BE(16);
    expect(out.toString('utf8', 20, 20 + length)).toBe('127.0.0.1:5002');
    expect(out.subarray(20 + length).toString()).toBe('rest');
  });

  it('leaves unknown addresses, other protocols and short chunks alone', () => {
    const other = initialMessage(-65536n, 2n, '127.0.0.1:1');
    expect(rewrite(other)).toEqual(other);
    const old = initialMessage(3n, 2n, '127.0.0.1:40001');
    expect(rewrite(old)).toEqual(old);
    expect(rewrite(Buffer.from('short'))).toEqual(Buffer.from('short'));
  });
});
