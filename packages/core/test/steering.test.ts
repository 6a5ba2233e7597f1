import { assertCandidate, assertResource, InvalidArgumentError, LockTimeoutError } from '@fencekit/core';
import { describe, expect, it } from 'vitest';

describe('steering characters (#14 LOW 14)', () => {
  const steering = ['\u202e', '\u202a', '\u2066', '\u200f', '\u061c', '\u2028', '\u2029'];

  it('are refused in resource names and candidates, like control characters', () => {
    for (const c of steering) {
      expect(() => assertResource(`invoice-${c}txt.exe`)).toThrow(InvalidArgumentError);
      expect(() => assertCandidate(`node-${c}1`)).toThrow(InvalidArgumentError);
    }
    expect(() => assertResource('🔒 emoji ok')).not.toThrow();
  });

  it('are escaped in every fencekit error message', () => {
    const error = new LockTimeoutError('a\u202eb\u2028FAKE LOG LINE', 5);
    for (const c of steering) expect(error.message).not.toContain(c);
    expect(error.message).toContain('a\\u202eb\\u2028FAKE LOG LINE');
    // `received` too: util.inspect prints it with steering characters raw.
    const refused = new InvalidArgumentError('resource', 'a\u202eb', 'x');
    expect(refused.received).toBe('a\\u202eb');
  });
});
