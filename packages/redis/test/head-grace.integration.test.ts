import { randomUUID } from 'node:crypto';
import { type AttemptRequest, LockNode, resourceKeys } from '@fencekit/redis/internal';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';

// The head-grace rules of the scripts, step by step on one node, as Redlock drives them: a waiter
// queued first that can never win a quorum (it only ever takes this node, then gives it back) must
// not keep winning this node from a waiter queued behind it once its turn has lapsed.
const GRACE_MS = 50;
let redis: Redis;
let subscriber: Redis;
let node: LockNode;

beforeAll(() => {
  redis = new Redis(`redis://${redisEndpoint()}`);
  subscriber = new Redis(`redis://${redisEndpoint()}`);
  node = new LockNode('test', redis);
});
afterAll(() => {
  redis.disconnect();
  subscriber.disconnect();
});

function request(owner: string, ticket: string, channel: string): AttemptRequest {
  return {
    owner,
    ttlMs: 5_000,
    mode: 'wait',
    ticket,
    waiterTtlMs: 3_000,
    channel,
    fenced: false,
    handoff: false,
    headGraceMs: GRACE_MS,
  };
}

describe('head grace on one node', () => {
  it('sends a head whose turn lapsed to the back of the line when it gives back, and wakes the new head', async () => {
    const keys = resourceKeys('fencekit:', `grace-${randomUUID()}`);
    const [head, next] = [`head-${randomUUID()}`, `next-${randomUUID()}`];
    const nextChannel = `wake-${randomUUID()}`;
    const wakes: string[] = [];
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === nextChannel) wakes.push(message);
    });
    await subscriber.subscribe(nextChannel);
    const giveBack = (owner: string, ticket: number, channel: string) =>
      node.release(keys, owner, { ticket, waiterTtlMs: 3_000, channel }, GRACE_MS);

    // The head takes the free node (its partial grant in a quorum round), the next waiter queues.
    expect((await node.attempt(keys, request(head, '1', 'head-channel'))).granted).toBe(true);
    expect((await node.attempt(keys, request(next, '2', nextChannel))).granted).toBe(false);
    // Its round failed: it gives the node back and keeps its place, as first in line. Its turn
    // starts now, so on its next round it takes the node again.
    expect(await giveBack(head, 1, 'head-channel')).toBe(1);
    expect(await redis.zrange(keys.queue, 0, -1)).toEqual([head, next]);
    expect((await node.attempt(keys, request(head, '1', 'head-channel'))).granted).toBe(true);

    // Its turn lapses while it holds the node; when it gives back again it goes to the back.
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 20));
    expect(await giveBack(head, 1, 'head-channel')).toBe(1);
    expect(await redis.zrange(keys.queue, 0, -1)).toEqual([next, head]);
    // The new head was told at once that the node is free for it...
    await until(() => wakes.includes(next));
    // ...the old head cannot take the node ahead of it any more...
    expect((await node.attempt(keys, request(head, '1', 'head-channel'))).granted).toBe(false);
    // ...and the new head is granted.
    expect((await node.attempt(keys, request(next, '2', nextChannel))).granted).toBe(true);
    expect(await redis.get(keys.lock)).toBe(next);
  });

  it('keeps a head in front while its turn lasts', async () => {
    const keys = resourceKeys('fencekit:', `grace-${randomUUID()}`);
    const [head, next] = [`head-${randomUUID()}`, `next-${randomUUID()}`];
    expect((await node.attempt(keys, request(head, '1', 'c1'))).granted).toBe(true);
    expect((await node.attempt(keys, request(next, '2', 'c2'))).granted).toBe(false);
    for (let i = 0; i < 3; i++) {
      expect(await node.release(keys, head, { ticket: 1, waiterTtlMs: 3_000, channel: 'c1' }, 60_000)).toBe(
        1,
      );
      expect(await redis.zrange(keys.queue, 0, -1)).toEqual([head, next]);
      expect((await node.attempt(keys, { ...request(next, '2', 'c2'), headGraceMs: 60_000 })).granted).toBe(
        false,
      );
      expect((await node.attempt(keys, { ...request(head, '1', 'c1'), headGraceMs: 60_000 })).granted).toBe(
        true,
      );
    }
  });
});

describe('direct grants to a Redlock waiter (a generation on its entry)', () => {
  it('hands the lock over within a head grace of the waiter asking, and only wakes it after that', async () => {
    const channel = `wake-${randomUUID()}`;
    const messages: string[] = [];
    subscriber.on('message', (from: string, message: string) => {
      if (from === channel) messages.push(message);
    });
    await subscriber.subscribe(channel);
    for (const [waitMs, handed] of [
      [0, true],
      [GRACE_MS + 30, false],
    ] as const) {
      const keys = resourceKeys('fencekit:', `handoff-${randomUUID()}`);
      const [holder, waiter] = [`holder-${randomUUID()}`, `waiter-${randomUUID()}`];
      expect((await node.attempt(keys, request(holder, '1', 'holder-channel'))).granted).toBe(true);
      const asked = { ...request(waiter, '2', channel), handoff: true, generation: '7' };
      expect((await node.attempt(keys, asked)).granted).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      expect(await node.release(keys, holder, undefined, GRACE_MS)).toBe(1);
      if (handed) {
        // Granted inside the release, unfenced, the message tagged with the attempt's generation.
        await until(() => messages.includes(`${waiter}|7`));
        expect(await redis.get(keys.lock)).toBe(waiter);
        expect(await redis.exists(keys.fence)).toBe(0);
      } else {
        // Asked too long ago (it may be dead or cut off): the lock stays free and the waiter is woken.
        await until(() => messages.includes(waiter));
        expect(await redis.exists(keys.lock)).toBe(0);
      }
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
