import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHistoryJsonl } from '@fencekit/checker';
import { writeRunPage } from './run-page.js';
import { storedRuns } from './site.js';

/** Re-renders every stored run's page from its history and stored results (no re-check). */
export function rebuildSite(root: string): number {
  let pages = 0;
  for (const run of storedRuns(root)) {
    const dir = join(root, run.dir);
    const historyPath = join(dir, 'history.jsonl');
    const history = parseHistoryJsonl(readFileSync(historyPath, 'utf8'), historyPath);
    writeRunPage(dir, run.meta, run.results, history);
    pages++;
  }
  return pages;
}
