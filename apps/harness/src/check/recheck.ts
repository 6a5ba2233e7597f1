import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Verdict } from '@fencekit/checker';
import { readRunHistory, readRunMeta } from '../report/stored-run.js';
import type { Warn } from '../report/warnings.js';
import { judgeRun } from '../run/output.js';

/**
 * Re-judges a stored run from its files (`fencekit check <run-dir>`): results.json and the page are
 * rewritten, and the site index above it only if fencekit made it. A run.json or history.jsonl that
 * is not what fencekit writes is bad input (`StoredRunError`, naming the file and what was wrong).
 */
export async function recheckRun(dir: string, warn?: Warn): Promise<Verdict> {
  const metaPath = join(dir, 'run.json');
  const historyPath = join(dir, 'history.jsonl');
  for (const path of [metaPath, historyPath]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: is ${dir} a fencekit run directory?`);
  }
  const meta = readRunMeta(metaPath);
  const history = readRunHistory(historyPath);
  return judgeRun(dir, meta, history, { siteIndex: 'if-fencekit', ...(warn ? { warn } : {}) });
}
