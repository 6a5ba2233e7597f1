import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type HistoryEvent, type Operation, parseOperations } from '../src/history/index.js';
import { checkLinearizable, checkLinearizableAsync } from '../src/linearizability/index.js';
import { casRegister, kv, register } from '../src/models/index.js';
import { sharedData } from './data-dir.js';

let nextId = 0;
function op(
  f: string,
  input: unknown,
  output: unknown,
  call: number,
  ret: number,
  extra: Partial<Operation> = {},
): Operation {
  return {
    id: nextId++,
    process: nextId,
    f,
    input,
    output,
    call,
    ret,
    status: ret === Number.POSITIVE_INFINITY ? 'info' : 'ok',
    ...extra,
  };
}
function history(...ops: Operation[]): Operation[] {
  return ops.map((o, id) => ({ ...o, id }));
}

describe('checkLinearizable', () => {
  it('returns a linearization for a linearizable history', () => {
    const ops = history(
      op('write', 1, null, 0, 10),
      op('read', null, 1, 5, 15),
      op('write', 2, null, 12, 20),
      op('read', null, 2, 21, 25),
    );
    const result = checkLinearizable(ops, register());
    expect(result.verdict).toBe('ok');
    expect(result.partitions[0]?.linearization).toEqual([0, 1, 2, 3]);
  });

  it('accepts raw events and pairs them', () => {
    const events: HistoryEvent[] = [
      { index: 0, time: 1, process: 0, type: 'invoke', f: 'write', value: 3 },
      { index: 1, time: 2, process: 0, type: 'ok', f: 'write', value: 3 },
      { index: 2, time: 3, process: 1, type: 'invoke', f: 'read', value: null },
      { index: 3, time: 4, process: 1, type: 'ok', f: 'read', value: 4 },
    ];
    expect(checkLinearizable(events, register()).verdict).toBe('illegal');
  });

  it('gives a witness for an illegal history: longest prefix and the op that could not be placed', () => {
    // write 1; write 2 strictly after; then a read of 1: stale.
    const ops = history(
      op('write', 1, null, 0, 1),
      op('write', 2, null, 2, 3),
      op('read', null, 1, 4, 5),
      op('write', 1, null, 6, 7),
    );
    const result = checkLinearizable(ops, register(), { convict: false });
    expect(result.verdict).toBe('illegal');
    const witness = result.partitions[0]?.witness;
    expect(witness?.prefix).toEqual([0, 1]);
    expect(witness?.finalState).toBe('2');
    expect(witness?.deadline).toBe(2);
    expect(witness?.unplaced).toEqual([
      {
        id: 2,
        description: expect.stringContaining('read'),
        reason: 'read a value the register did not hold',
      },
    ]);
  });

  it('convicts without search a read overwritten before it began, naming the ops', () => {
    const ops = history(op('write', 1, null, 0, 1), op('write', 2, null, 2, 3), op('read', null, 1, 4, 5));
    const result = checkLinearizable(ops, register());
    expect(result.partitions[0]?.steps).toBe(0);
    expect(result.partitions[0]?.witness?.conviction).toMatch(/overwritten/);
    expect(result.partitions[0]?.witness?.unplaced.map((u) => u.id)).toEqual([0, 1, 2]);
  });

  it('lets an info op take effect late, or never', () => {
    const late = history(
      op('write', 1, null, 0, Number.POSITIVE_INFINITY),
      op('read', null, null, 2, 3),
      op('read', null, 1, 5, 6),
    );
    expect(checkLinearizable(late, register()).verdict).toBe('ok');
    const never = history(op('write', 1, null, 0, Number.POSITIVE_INFINITY), op('read', null, null, 5, 6));
    expect(checkLinearizable(never, register()).verdict).toBe('ok');
  });

  it('does not treat a write of the current value as free to move (regression: unsound greedy)', () => {
    const ops = history(
      op('cas', [2, 1], [2, 1], 56, 71),
      op('write', 2, null, 61, 69),
      op('write', 0, null, 62, 63),
      op('cas', [0, 2], null, 80, Number.POSITIVE_INFINITY),
      op('read', null, 2, 110, 121),
      op('write', 0, null, 111, 122),
      op('read', null, 0, 129, 139),
    );
    expect(checkLinearizable(ops, casRegister()).verdict).toBe('ok');
  });

  it('checks every key separately and reports each verdict', () => {
    const ops = history(
      op('append', 'a', null, 0, 1, { key: 'x' }),
      op('get', null, 'a', 2, 3, { key: 'x' }),
      op('append', 'b', null, 0, 1, { key: 'y' }),
      op('get', null, 'c', 2, 3, { key: 'y' }),
    );
    const result = checkLinearizable(ops, kv());
    expect(result.verdict).toBe('illegal');
    expect(result.partitions.map((p) => [p.key, p.verdict])).toEqual([
      ['x', 'ok'],
      ['y', 'illegal'],
    ]);
  });

  it('stops at the first illegal partition when asked, leaving the rest unknown (skipped)', () => {
    const ops = history(op('get', null, 'z', 0, 1, { key: 'x' }), op('get', null, '', 0, 1, { key: 'y' }));
    const result = checkLinearizable(ops, kv(), { perPartition: false });
    expect(result.verdict).toBe('illegal');
    expect(result.partitions[1]).toMatchObject({ verdict: 'unknown', reason: 'skipped' });
  });

  const c50 = () => parseOperations(readFileSync(`${sharedData()}porcupine/kv/c50-ok.txt`, 'utf8'), 'edn');

  it('answers unknown (timeout), never ok, when the time budget runs out', () => {
    const result = checkLinearizable(c50(), kv(), { timeoutMs: 0 });
    expect(result.verdict).toBe('unknown');
    expect(result.partitions.every((p) => p.verdict === 'unknown' && p.reason === 'timeout')).toBe(true);
  });

  it('answers unknown (memory) when the memory budget is exceeded', () => {
    const result = checkLinearizable(c50(), kv(), { memoryBytes: 64 * 1024 });
    expect(result.verdict).toBe('unknown');
    expect(result.partitions.some((p) => p.reason === 'memory')).toBe(true);
    // Small keys may finish before they ever reach the budget; none may pass by running out.
    for (const p of result.partitions) if (p.verdict === 'unknown') expect(p.reason).toBe('memory');
  });

  it('runs asynchronously with the same verdicts, and stops on abort with unknown (aborted)', async () => {
    const ops = c50();
    const result = await checkLinearizableAsync(ops, kv(), { sliceMs: 5 });
    expect(result.verdict).toBe('ok');
    expect(result.partitions.every((p) => p.verdict === 'ok')).toBe(true);
    const controller = new AbortController();
    controller.abort();
    const aborted = await checkLinearizableAsync(ops, kv(), { signal: controller.signal });
    expect(aborted.verdict).toBe('unknown');
    expect(aborted.partitions.every((p) => p.reason === 'aborted')).toBe(true);
  });
});
