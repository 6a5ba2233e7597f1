import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHistoryJsonl, type Verdict } from '@fencekit/checker';
import { judgeRun, type RunMeta } from '../run/output.js';

/** Re-judges a stored run from its files (`fencekit check <run-dir>`): results.json and the page are rewritten. */
export async function recheckRun(dir: string): Promise<Verdict> {
  const metaPath = join(dir, 'run.json');
  const historyPath = join(dir, 'history.jsonl');
  for (const path of [metaPath, historyPath]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: is ${dir} a fencekit run directory?`);
  }
  const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as RunMeta;
  const history = parseHistoryJsonl(readFileSync(historyPath, 'utf8'), historyPath);
  return judgeRun(dir, meta, history);
}
