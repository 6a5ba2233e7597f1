import { inspect } from 'node:util';
import {
  BackendUnavailableError,
  InvalidArgumentError,
  LockAbortedError,
  LockLostError,
  REDACTED,
  redactText,
  redactValue,
  safeCause,
} from '@fencekit/core';
import { renderEverywhere } from '@fencekit/core/testing';
import { describe, expect, it } from 'vitest';

const everyRendering = renderEverywhere;

describe('redactText', () => {
  it('removes user-info from URLs and bare user:pass@host, and leaves other text alone', () => {
    const cases: [string, string][] = [
      ['redis://user:secret@127.0.0.1:6379/0', `redis://${REDACTED}@127.0.0.1:6379/0`],
      ['connect to redis://:secret@h failed', `connect to redis://${REDACTED}@h failed`],
      ['http://root:secret@127.0.0.1:2379', `http://${REDACTED}@127.0.0.1:2379`],
      ['hosts ["root:secret@127.0.0.1:2379"]', `hosts ["${REDACTED}@127.0.0.1:2379"]`],
      ['u:se@cret@127.0.0.1:2181,x', `${REDACTED}@127.0.0.1:2181,x`],
      ['dns:root:secret@127.0.0.1:2379', `${REDACTED}@127.0.0.1:2379`],
      ['at (/w/node_modules/@fencekit/core/x.js:1:2)', 'at (/w/node_modules/@fencekit/core/x.js:1:2)'],
      ['mail a@b.com', 'mail a@b.com'],
      ['redis://h:1/0?password=secret&db=2', `redis://h:1/0?password=${REDACTED}&db=2`],
      ['http://h/?a=1&Token=secret#x', `http://h/?a=1&Token=${REDACTED}#x`],
      ['connect ECONNREFUSED 127.0.0.1:6379', 'connect ECONNREFUSED 127.0.0.1:6379'],
    ];
    for (const [text, expected] of cases) expect(redactText(text)).toBe(expected);
  });

  it('is linear in the text, however hostile (1 MB runs within 1 s each)', () => {
    const n = 1_000_000;
    for (const text of [
      'x'.repeat(n),
      'a:'.repeat(n / 2),
      'a://'.repeat(n / 4),
      'a:@'.repeat(n / 3),
      '&pass='.repeat(n / 6),
    ]) {
      const started = performance.now();
      redactText(text);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});

describe('redactValue', () => {
  it('copies arrays and plain objects with secret-named fields and URL credentials redacted', () => {
    const value = redactValue({
      hosts: ['http://root:secret@h:1', 'h:2'],
      auth: { username: 'root', password: 'secret' },
      password: 'secret',
      nested: { token: 'secret', db: 3 },
    });
    expect(value).toEqual({
      hosts: [`http://${REDACTED}@h:1`, 'h:2'],
      auth: REDACTED,
      password: REDACTED,
      nested: { token: REDACTED, db: 3 },
    });
  });
});

describe('safeCause', () => {
  it("keeps the class, message, code and a safe cause chain, but not ioredis' command arguments", () => {
    class ReplyError extends Error {}
    const reply = new ReplyError('WRONGPASS invalid username-password pair');
    Object.assign(reply, { command: { name: 'auth', args: ['fencekit', 'secret'] }, code: 'WRONGPASS' });
    const wrapper = new Error('outer with redis://u:secret@h', { cause: reply });
    const copy = safeCause(wrapper) as Error & { cause: ReplyError & { code: string } };
    expect(copy).toBeInstanceOf(Error);
    expect(copy.cause).toBeInstanceOf(ReplyError);
    expect(copy.cause.code).toBe('WRONGPASS');
    expect(copy.cause.message).toBe('WRONGPASS invalid username-password pair');
    expect(everyRendering(copy)).not.toContain('secret');
  });

  it('copies a DOMException (its accessors work only on real instances) and cuts a cyclic chain', () => {
    const copy = safeCause(new DOMException('This operation was aborted', 'AbortError')) as Error;
    expect(copy.name).toBe('AbortError');
    expect(inspect(copy)).toContain('This operation was aborted');
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;
    expect(() => inspect(safeCause(cyclic), { depth: Number.POSITIVE_INFINITY })).not.toThrow();
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('boom');
      },
    });
    expect(safeCause(hostile)).toBeInstanceOf(Error);
    const trap = {
      get password() {
        throw new Error('boom');
      },
    };
    expect(new InvalidArgumentError('options', trap, 'x').received).toBe(REDACTED);
  });
});

describe('fencekit errors', () => {
  it('redact their message and keep a safe copy of a foreign cause', () => {
    const reply = Object.assign(new Error('WRONGPASS invalid username-password pair'), {
      command: { name: 'auth', args: ['fencekit', 'secret'] },
    });
    const error = new BackendUnavailableError('redis', 'at redis://fencekit:secret@127.0.0.1:1', {
      cause: reply,
    });
    expect(error.message).toBe(`redis unavailable: at redis://${REDACTED}@127.0.0.1:1`);
    expect(everyRendering(error)).not.toContain('secret');
    expect((error.cause as Error).message).toBe('WRONGPASS invalid username-password pair');
  });

  it("LockAbortedError keeps the caller's abort reason as it is", () => {
    const reason = new Error('shutting down');
    expect(new LockAbortedError('r', { cause: reason }).cause).toBe(reason);
    const signal = AbortSignal.abort();
    expect(new LockAbortedError('r', { cause: signal.reason }).cause).toBe(signal.reason);
  });

  it('keep a fencekit cause as it is (it is safe already)', () => {
    const lost = new LockLostError('r', 'session expired');
    expect(new LockAbortedError('r', { cause: lost }).cause).toBe(lost);
  });

  it('InvalidArgumentError keeps hosts and options redacted', () => {
    const error = new InvalidArgumentError(
      'hosts',
      ['http://root:secret@127.0.0.1:2379', { password: 'secret' }],
      'endpoints',
    );
    expect(error.received).toEqual([`http://${REDACTED}@127.0.0.1:2379`, { password: REDACTED }]);
    expect(everyRendering(error)).not.toContain('secret');
    const text = new InvalidArgumentError('servers', 'zk:secret@127.0.0.1', 'host:port');
    expect(everyRendering(text)).not.toContain('secret');
  });
});
