import { neverConnectedReason, trackConnectionState } from '@fencekit/redis/internal';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

describe('connection state', () => {
  it('says why nothing was sent until the connection was first ready', () => {
    // Never connected: lazyConnect, and the events are the ones ioredis emits.
    const redis = new Redis({ lazyConnect: true, port: 1 });
    const untrack = trackConnectionState(redis);
    expect(neverConnectedReason(redis, 'x:1')).toBe('could not connect to x:1');
    redis.emit('error', new Error('self-signed certificate'));
    expect(neverConnectedReason(redis, 'x:1')).toBe('could not connect to x:1: self-signed certificate');
    redis.emit('ready');
    expect(neverConnectedReason(redis, 'x:1')).toBeUndefined();
    untrack();
    expect(redis.listenerCount('ready')).toBe(0);
  });

  it('is shared by the clients of one connection and kept until the last lets go', () => {
    const redis = new Redis({ lazyConnect: true, port: 1 });
    const first = trackConnectionState(redis);
    redis.emit('ready');
    // A second client arriving while the connection is down must not think it never came up.
    const second = trackConnectionState(redis);
    expect(neverConnectedReason(redis, 'x:1')).toBeUndefined();
    first();
    first();
    expect(neverConnectedReason(redis, 'x:1')).toBeUndefined();
    expect(redis.listenerCount('ready')).toBe(1);
    second();
    expect(redis.listenerCount('ready')).toBe(0);
  });
});
