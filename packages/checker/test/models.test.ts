import { describe, expect, it } from 'vitest';
import type { Operation } from '../src/history/index.js';
import { HistoryShapeError } from '../src/history/index.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { fencedRegister, Inconsistent, type Model, modelByName, mutex, set } from '../src/models/index.js';

function ops(
  ...list: [string | number, string, unknown, unknown, number, number, ('ok' | 'info')?][]
): Operation[] {
  return list.map(([process, f, input, output, call, ret, status], id) => ({
    id,
    process,
    f,
    input,
    output,
    call,
    ret: status === 'info' ? Number.POSITIVE_INFINITY : ret,
    status: status ?? 'ok',
  }));
}

describe('mutex tracks the holder', () => {
  it('accepts acquire/release in turn and rejects a release by someone else', () => {
    const good = ops(
      [1, 'acquire', null, null, 0, 1],
      [1, 'release', null, null, 2, 3],
      [2, 'acquire', null, null, 4, 5],
    );
    expect(checkLinearizable(good, mutex()).verdict).toBe('ok');
    // knossos's mutex would accept this: it does not track who holds the lock.
    const stolen = ops(
      [1, 'acquire', null, null, 0, 1],
      [2, 'release', null, null, 2, 3],
      [2, 'acquire', null, null, 4, 5],
    );
    const result = checkLinearizable(stolen, mutex());
    expect(result.verdict).toBe('illegal');
    expect(result.partitions[0]?.witness?.unplaced[0]?.reason).toBe('2 released the lock 1 held');
  });

  it('names holders by owner when the ops carry one', () => {
    const owned = ops([1, 'acquire', { owner: 'a' }, null, 0, 1], [2, 'release', { owner: 'a' }, null, 2, 3]);
    expect(checkLinearizable(owned, mutex()).verdict).toBe('ok');
  });

  it('requires fences to grow with every grant', () => {
    const stale = ops(
      [1, 'acquire', null, { fence: '5' }, 0, 1],
      [1, 'release', null, null, 2, 3],
      [2, 'acquire', null, { fence: '5' }, 4, 5],
    );
    expect(checkLinearizable(stale, mutex()).verdict).toBe('illegal');
    expect(checkLinearizable(stale, mutex({ fences: false })).verdict).toBe('ok');
  });

  it('allows a second acquire only once the first lease may have expired', () => {
    const ms = 1e6;
    const overlap = ops(
      [1, 'acquire', { ttlMs: 100 }, null, 0, 1 * ms],
      [2, 'acquire', { ttlMs: 100 }, null, 50 * ms, 60 * ms],
    );
    expect(checkLinearizable(overlap, mutex()).verdict).toBe('illegal');
    const expired = ops(
      [1, 'acquire', { ttlMs: 100 }, null, 0, 1 * ms],
      [2, 'acquire', { ttlMs: 100 }, null, 150 * ms, 160 * ms],
    );
    expect(checkLinearizable(expired, mutex()).verdict).toBe('ok');
  });

  it('lets an acquire with unknown outcome either hold the lock or not', () => {
    const maybe = ops([1, 'acquire', null, null, 0, 0, 'info'], [2, 'acquire', null, null, 5, 6]);
    expect(checkLinearizable(maybe, mutex()).verdict).toBe('ok');
  });
});

describe('fenced register', () => {
  it('accepts only increasing fences and reads the last accepted value', () => {
    const good = ops(
      [1, 'write', { value: 'a', fence: '1' }, true, 0, 1],
      [2, 'write', { value: 'b', fence: '1' }, { accepted: false }, 2, 3],
      [3, 'read', null, 'a', 4, 5],
    );
    expect(checkLinearizable(good, fencedRegister()).verdict).toBe('ok');
    const staleAccepted = ops(
      [1, 'write', { value: 'a', fence: '2' }, true, 0, 1],
      [2, 'write', { value: 'b', fence: '1' }, true, 2, 3],
    );
    const result = checkLinearizable(staleAccepted, fencedRegister());
    expect(result.verdict).toBe('illegal');
    expect(result.partitions[0]?.witness?.unplaced[0]?.reason).toMatch(/fence is not above/);
  });

  it('rejects a write without a fence as bad input', () => {
    expect(() => checkLinearizable(ops([1, 'write', 'a', true, 0, 1]), fencedRegister())).toThrow(
      HistoryShapeError,
    );
  });
});

describe('set', () => {
  it('reads all members added before, in any order', () => {
    const good = ops(
      [1, 'add', 1, null, 0, 1],
      [2, 'add', { x: 2 }, null, 0, 1],
      [3, 'read', null, [{ x: 2 }, 1], 2, 3],
    );
    expect(checkLinearizable(good, set()).verdict).toBe('ok');
    const lost = ops([1, 'add', 1, null, 0, 1], [2, 'add', 2, null, 0, 1], [3, 'read', null, [2], 2, 3]);
    expect(checkLinearizable(lost, set()).verdict).toBe('illegal');
  });
});

describe('models are plain objects', () => {
  it('a user model is one object literal', () => {
    // A counter: incr adds one, read returns the count.
    const counter: Model<number, { incr: boolean; value: number; known: boolean }> = {
      name: 'counter',
      init: () => 0,
      prepare: (op) => ({ incr: op.f === 'incr', value: Number(op.output), known: op.status === 'ok' }),
      step: (state, op) =>
        op.incr ? state + 1 : !op.known || op.value === state ? state : new Inconsistent('wrong count'),
    };
    const history = ops(
      [1, 'incr', null, null, 0, 10],
      [2, 'incr', null, null, 0, 10],
      [3, 'read', null, 1, 1, 2],
    );
    expect(checkLinearizable(history, counter).verdict).toBe('ok');
  });

  it('built-ins are found by name', () => {
    expect(
      ['register', 'cas-register', 'kv', 'mutex', 'fenced-register', 'set', 'multi-register'].map(
        (n) => modelByName(n)?.name,
      ),
    ).toEqual(['register', 'cas-register', 'kv', 'mutex', 'fenced-register', 'set', 'multi-register']);
    expect(modelByName('toString')).toBeUndefined();
  });

  it('an op the model does not know is bad input', () => {
    expect(() => checkLinearizable(ops([1, 'frobnicate', null, null, 0, 1]), mutex())).toThrow(
      /has no operation "frobnicate"/,
    );
  });
});
