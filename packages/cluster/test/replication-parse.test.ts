import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClusterNodes } from '../src/replication.js';
import { redisCall } from '../src/resp.js';

describe('CLUSTER NODES lines', () => {
  const members = new Map([
    ['10.0.0.2:6379', 'n1'],
    ['127.0.0.1:40001', 'n4'],
  ]);
  it('map announced addresses (with or without a hostname) to members, and count slots', () => {
    const text = [
      'aaa 10.0.0.2:6379@16379 myself,master - 0 0 1 connected 0-5460 [5461->-bbb]',
      'bbb 127.0.0.1:40001@40002,host-4 slave aaa 0 1700000000000 1 connected',
      'ccc 10.0.0.9:6379@16379 master,fail - 0 0 2 disconnected 5461 5462-5463',
      '',
    ].join('\n');
    const lines = parseClusterNodes(text, (a) => members.get(a));
    expect(lines.map((l) => [l.member, l.slots, l.primaryNodeId, l.connected])).toEqual([
      ['n1', 5461, undefined, true],
      ['n4', 0, 'aaa', true],
      [undefined, 3, undefined, false],
    ]);
    expect(lines[2]!.flags).toEqual(['master', 'fail']);
  });
});

describe('RESP replies', () => {
  let server: Server;
  let port = 0;
  /** A fake server answering each connection's first request with the next canned reply. */
  const replies: string[] = [];
  beforeAll(async () => {
    server = createServer((socket) => {
      socket.once('data', () => {
        const reply = replies.shift() ?? '-ERR none\r\n';
        // In two writes: a reply split across packets must still be parsed whole.
        socket.write(reply.slice(0, 3));
        setTimeout(() => socket.write(reply.slice(3)), 20);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('decodes nested arrays, nulls, integers, bulk strings and errors', async () => {
    replies.push(
      '*3\r\n$9\r\n127.0.0.1\r\n:6379\r\n*2\r\n$-1\r\n+OK\r\n',
      '-NOGOODSLAVE No suitable replica\r\n',
    );
    expect(await redisCall('127.0.0.1', port, ['PING'])).toEqual(['127.0.0.1', 6379, [null, 'OK']]);
    const error = await redisCall('127.0.0.1', port, ['PING']);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('NOGOODSLAVE No suitable replica');
  });
});
