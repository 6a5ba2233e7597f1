import { DEFAULT_KEY_PREFIX, resourceKeys, wakeChannel } from '@fencekit/redis/internal';
import { describe, expect, it } from 'vitest';

describe('resourceKeys', () => {
  it('puts every key of a resource under the prefix and one hash tag', () => {
    const keys = resourceKeys(DEFAULT_KEY_PREFIX, 'orders/42');
    expect(Object.values(keys)).toEqual([
      'fencekit:{orders/42}:lock',
      'fencekit:{orders/42}:fence',
      'fencekit:{orders/42}:queue',
      'fencekit:{orders/42}:waiters',
      'fencekit:{orders/42}:tickets',
      'fencekit:{orders/42}:epoch',
    ]);
  });

  it('never gives two resources the same key, whatever braces or colons they contain', () => {
    const names = ['a', 'a}:lock', 'a}:fence', '{a}', 'a:lock', '}', '{', 'a}:queue}:lock', ''];
    const seen = new Map<string, string>();
    for (const name of names) {
      for (const key of Object.values(resourceKeys('p:', name))) {
        expect(seen.get(key) ?? name).toBe(name);
        seen.set(key, name);
      }
    }
  });

  it('names wake channels under the prefix', () => {
    expect(wakeChannel('app:', 'c1')).toBe('app:wake:c1');
  });
});
