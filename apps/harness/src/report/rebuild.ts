import { join } from 'node:path';
import { writeRunPage } from './run-page.js';
import { storedRuns } from './site.js';
import { readRunHistory, StoredRunError } from './stored-run.js';
import { skippedRun, type Warn, warnOnStderr } from './warnings.js';

/**
 * Re-renders every stored run's page from its history and stored results (no re-check). A run whose
 * files cannot be read is skipped with a warning; returns the number of pages written.
 */
export function rebuildSite(root: string, warn: Warn = warnOnStderr): number {
  let pages = 0;
  for (const run of storedRuns(root, warn)) {
    const dir = join(root, run.dir);
    let history: ReturnType<typeof readRunHistory>;
    try {
      history = readRunHistory(join(dir, 'history.jsonl'));
    } catch (error) {
      if (!(error instanceof StoredRunError)) throw error;
      warn(skippedRun(error));
      continue;
    }
    // One run whose page cannot be built or written (a value past what a string can hold, a file in the
    // way) is skipped like an unreadable one: the other runs' pages and the index are still made.
    try {
      if (writeRunPage(dir, run.meta, run.results, history, warn)) pages++;
    } catch (error) {
      const why = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.name) : 'error';
      warn({ kind: 'skipped-run', file: join(dir, 'index.html'), problem: `page not written (${why})` });
    }
  }
  return pages;
}
