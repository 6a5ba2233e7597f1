import { escapeLine } from '@fencekit/checker';
import type { StoredRunError } from './stored-run.js';

/**
 * What `check`, `report` and a run's report left alone, and why: a stored run that could not be read
 * (the pages are built from the others) or a page fencekit did not make (never overwritten).
 */
export interface ReportWarning {
  kind: 'skipped-run' | 'foreign-page';
  file: string;
  problem: string;
}

export type Warn = (warning: ReportWarning) => void;

export const skippedRun = (error: StoredRunError): ReportWarning => ({
  kind: 'skipped-run',
  file: error.file,
  problem: error.problem,
});

/** The CLI's default: one line on stderr, where progress goes too; a directory's name may hold escapes. */
export const warnOnStderr: Warn = (w) => {
  const what = w.kind === 'skipped-run' ? 'skipped' : 'left alone';
  process.stderr.write(`fencekit: warning: ${what} ${escapeLine(`${w.file}: ${w.problem}`)}\n`);
};

/** Each warning once: `report` reads the stored runs for the pages and again for the index. */
export function warnOnce(warn: Warn): Warn {
  const seen = new Set<string>();
  return (w) => {
    const key = `${w.kind}\0${w.file}\0${w.problem}`;
    if (seen.has(key)) return;
    seen.add(key);
    warn(w);
  };
}
