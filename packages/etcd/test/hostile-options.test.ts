// #14 HIGH 2, MEDIUM 8, LOW 16: options that would send or show a password are refused, exactly as
// etcd3 will read them, and the refusal reads as written (the redactor does not mangle it).
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { EtcdClient, type EtcdClientOptions } from '@fencekit/etcd';
import { describe, expect, it } from 'vitest';

const secret = `Pw,comma(${randomBytes(8).toString('hex')})`;
const E = '127.0.0.1:2379';

function refusal(options: EtcdClientOptions): InvalidArgumentError {
  let client: EtcdClient | undefined;
  try {
    client = new EtcdClient(options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  void client.close();
  return expect.fail(
    `accepted: ${JSON.stringify(options, (_k, v) => (typeof v === 'string' ? v.replaceAll(secret, '…') : v))}`,
  );
}

describe('etcd options that would send or show a password', () => {
  it('refuses auth over plaintext when credentials is null, false or empty (etcd3 then uses no TLS)', () => {
    const auth = { username: 'bob', password: secret };
    for (const credentials of [null, false, '', 0]) {
      const error = refusal({ hosts: [E], credentials: credentials as never, auth });
      expect(error.argument).toBe('auth');
      assertNoSecret(error, [secret], `credentials ${String(credentials)}`);
    }
    // A mix of https:// and plaintext hosts: etcd3 throws a plain Error; refused as an argument.
    expect(refusal({ hosts: [`https://${E}`, E], auth }).argument).toBe('hosts');
  });

  it('refuses user info however the host is written (leading space, tab, comma or paren in the password)', () => {
    for (const hosts of [
      [` http://bob:${secret}@${E}`],
      `\thttp://bob:${secret}@${E}`,
      [`${E}`, ` bob:${secret}@${E}`],
      [`http://bob:${secret}@${E}`],
      [`bob:${secret}@${E}`],
    ]) {
      const error = refusal({ hosts });
      expect(error.argument).toBe('hosts');
      assertNoSecret(error, [secret, secret.slice(2)], 'a host with user info');
    }
  });

  it('words its refusals so that redaction leaves them as written', () => {
    const errors = [
      refusal({ hosts: [`http://bob:${secret}@${E}`] }),
      refusal({ hosts: [E], auth: { username: 'bob', password: secret } }),
      refusal({ hosts: [''] }),
    ];
    for (const error of errors) {
      expect(error.message).toContain(`expected ${error.expected}`);
      expect(error.expected).not.toContain('***');
    }
  });
});
