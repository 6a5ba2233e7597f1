import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadOperations } from '../src/history/index.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { type AnyModel, casRegister, multiRegister, mutex } from '../src/models/index.js';
import { sharedData } from './data-dir.js';

const root = `${sharedData()}knossos/`;
const suites: [string, () => AnyModel][] = [
  ['cas-register', () => casRegister()],
  ['mutex', () => mutex()],
  // knossos's test history starts from x = 0, y = 0 (its header comment says so).
  ['multi-register', () => multiRegister({ x: 0, y: 0 })],
];

function ednFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.edn'));
  } catch {
    return [];
  }
}

describe('knossos good/ and bad/ folders', () => {
  it('has the real etcd lock history among the bad ones', () => {
    expect(ednFiles(`${root}mutex/bad`)).toContain('etcd.edn');
  });

  for (const [folder, model] of suites) {
    for (const kind of ['good', 'bad'] as const) {
      for (const file of ednFiles(`${root}${folder}/${kind}`)) {
        const verdict = kind === 'good' ? 'ok' : 'illegal';
        it(`${folder}/${kind}/${file} is ${verdict}`, async () => {
          const ops = await loadOperations(`${root}${folder}/${kind}/${file}`);
          const result = checkLinearizable(ops, model(), { timeoutMs: 20_000 });
          expect(result.verdict).toBe(verdict);
        });
      }
    }
  }
});
