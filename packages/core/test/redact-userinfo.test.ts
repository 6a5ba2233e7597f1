import { inspect } from 'node:util';
import { InvalidArgumentError, redactText } from '@fencekit/core';
import { renderEverywhere } from '@fencekit/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Characters RFC 3986 allows unencoded in user-info (unreserved, sub-delims, ':'), plus the ones a
// WHATWG URL accepts there too ('[', ']', '|', '"', '@'), plus percent-escapes.
const USERINFO_CHARS = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~',
  ...`!$&'()*+,;=:`,
  ...'[]|"@',
  '%20',
  '%2F',
  '%40',
];
// A marker no host or surrounding text contains, so "the password appears" is never a coincidence.
const password = fc
  .array(fc.constantFrom(...USERINFO_CHARS), { minLength: 1, maxLength: 24 })
  .map((parts) => `Qz${parts.join('')}`);
const user = fc.constantFrom('', 'alice', 'bob', 'digest');

const contexts: ((secret: string, name: string) => string)[] = [
  (p, u) => `redis://${u}:${p}@10.0.0.1:6379/0`,
  (p, u) => `connect to rediss://${u}:${p}@cache.example.test:6380 failed`,
  (p, u) => `http://${u}:${p}@127.0.0.1:2379`,
  (p, u) => JSON.stringify({ hosts: [`http://${u}:${p}@127.0.0.1:2379`, 'h:2'] }),
  (p, u) => inspect([`redis://${u}:${p}@h:1`, `redis://${u}:${p}@h:2`]),
  (p, u) => `${u}:${p}@127.0.0.1:2379`,
  (p, u) => `127.0.0.1:2181,${u}:${p}@127.0.0.1:2182/chroot`,
  (p, u) => `hosts ["${u}:${p}@127.0.0.1:2379", 42]`,
  (p, u) => JSON.stringify(`etcd user ${u}:${p}@10.0.0.1:2379`),
  (p, u) => `redis://${u}:${p}@h:1,redis://${u}:${p}@h:2`,
  (p) => `redis://h:1/0?password=${p}&db=2`,
];

describe('redactText on passwords with any URL-legal character (#14 HIGH 3)', () => {
  it('never shows the password, in any context', () => {
    fc.assert(
      fc.property(password, user, fc.integer({ min: 0, max: contexts.length - 1 }), (p, u, which) => {
        const context = contexts[which] as (secret: string, name: string) => string;
        const shown = redactText(context(p, u));
        expect(shown).not.toContain(p);
        expect(shown).not.toContain(JSON.stringify(p).slice(1, -1));
      }),
      { numRuns: 3000 },
    );
  });

  it("hides the reviewer's eight passwords (, ; ' ( ) [ ] | \" ! $ & + = *)", () => {
    for (const p of [
      `Pw;semi`,
      'Pw,comma',
      "Pw'quote",
      'Pw(paren)',
      'Pw!bang$&+=*',
      'Pw[x]',
      'Pw|pipe',
      'Pw"dq',
    ]) {
      const error = new InvalidArgumentError('connection', [`redis://alice:${p}@10.0.0.1:6379/0`], 'x');
      const text = new InvalidArgumentError('hosts', `etcd user alice:${p}@10.0.0.1:2379`, 'x');
      for (const rendered of [renderEverywhere(error), renderEverywhere(text)]) {
        expect(rendered).not.toContain(p.slice(3));
      }
    }
  });

  it('leaves text without credentials alone, stack paths and e-mail addresses included', () => {
    for (const text of [
      'at f (/w/node_modules/@fencekit/core/dist/x.js:1:2)',
      'at file:///w/node_modules/@fencekit/core/dist/x.js:1:2',
      'mail a@b.com',
      'connect ECONNREFUSED 127.0.0.1:6379',
    ]) {
      expect(redactText(text)).toBe(text);
    }
  });
});
