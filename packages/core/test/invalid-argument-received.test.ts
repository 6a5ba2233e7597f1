import { inspect } from 'node:util';
import { InvalidArgumentError } from '@fencekit/core';
import { renderEverywhere } from '@fencekit/core/testing';
import { describe, expect, it } from 'vitest';

describe('InvalidArgumentError.received (#14 HIGH 4)', () => {
  it('keeps a description of a URL, Map, class instance or client, never the object', () => {
    class Auth {
      username = 'bob';
      password = 'ClassPw-7';
    }
    const client = { options: { password: 'ClientPw-8' } };
    Object.setPrototypeOf(client, class Redis {}.prototype);
    for (const [value, shown] of [
      [new URL('redis://alice:UrlObjPw-6@127.0.0.1:6379'), '[URL]'],
      [new Auth(), '[Auth]'],
      [new Map([['password', 'MapPw-9']]), '[Map]'],
      [client, '[Redis]'],
    ] as const) {
      const error = new InvalidArgumentError('connection', { nested: [value] }, 'x');
      expect(error.received).toEqual({ nested: [shown] });
      const direct = new InvalidArgumentError('connection', value, 'x');
      expect(direct.received).toBe(shown);
      expect(direct.message).toBe(`Invalid connection: got ${shown}, expected x`);
      for (const rendered of [renderEverywhere(error), renderEverywhere(direct)]) {
        expect(rendered).not.toMatch(/UrlObjPw|ClassPw|MapPw|ClientPw/);
      }
    }
  });

  it('is bounded: long arrays, many fields and long strings are cut', () => {
    const error = new InvalidArgumentError(
      'hosts',
      { list: Array.from({ length: 10_000 }, (_, i) => `h${i}:1`), text: 'x'.repeat(100_000) },
      'x',
    );
    expect(inspect(error, { depth: Number.POSITIVE_INFINITY }).length).toBeLessThan(5_000);
  });
});
