import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadOperations } from '../src/history/index.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { casRegister, kv } from '../src/models/index.js';
import { sharedData } from './data-dir.js';

const root = `${sharedData()}porcupine/`;
const expected = readFileSync(`${root}expected.tsv`, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => line.split('\t'))
  .map(([file, , verdict]) => ({ file: file as string, verdict: verdict as string }));

describe('same verdict as porcupine', () => {
  it('covers all 102 etcd logs and the 6 kv files', () => {
    expect(expected.filter((e) => e.file.startsWith('jepsen/etcd_'))).toHaveLength(102);
    expect(expected.filter((e) => e.file.startsWith('kv/'))).toHaveLength(6);
  });

  for (const { file, verdict } of expected) {
    it(`${file} is ${verdict}`, async () => {
      const ops = await loadOperations(root + file);
      const model = file.startsWith('kv/') ? kv() : casRegister();
      const result = checkLinearizable(ops, model, { timeoutMs: 20_000 });
      expect(result.verdict).toBe(verdict);
      // Every key decided, never left unknown (porcupine decides these too, given time).
      for (const p of result.partitions) expect(p.verdict).not.toBe('unknown');
      if (verdict === 'ok') {
        for (const p of result.partitions) expect(p.linearization?.length).toBeGreaterThan(0);
      } else {
        const bad = result.partitions.filter((p) => p.verdict === 'illegal');
        for (const p of bad) expect(p.witness?.unplaced.length).toBeGreaterThan(0);
      }
    });
  }
});
