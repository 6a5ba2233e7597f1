/** ZooKeeper transaction ids (czxid, pzxid) arrive as 8-byte big-endian buffers; fences are bigints. */
export function zxidOf(buffer: Buffer): bigint {
  return buffer.readBigInt64BE(0);
}
