import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeOwnFile } from '../report/safe-write.js';
import type { RunResults } from '../run/output.js';
import {
  type Cell,
  type CellEvidence,
  cellEvidence,
  cellKey,
  cellOf,
  FIRST_VIOLATION_MEASURE,
} from './evidence.js';
import type { SuiteOutcome } from './suite.js';

/**
 * A cell's figures as results.json keeps them: what is unknown (no rate without a judged run, no time
 * without a conviction) is written as null, never left out.
 */
export interface SuiteCellResult
  extends Cell,
    Omit<CellEvidence, 'rate' | 'interval' | 'medianFirstViolationMs'> {
  rate: number | null;
  interval: CellEvidence['interval'] | null;
  medianFirstViolationMs: number | null;
  workloads: string[];
  /** Entries that did not run (backend unavailable, run failed): in no figure above. */
  notRun: number;
  runIds: string[];
}

/** `<out>/results.json` of a suite: the figures of this suite's runs, per cell. */
export interface SuiteResults {
  kind: 'fencekit-suite';
  writtenAt: string;
  interval: 'Wilson score, 95 %';
  firstViolationMs: string;
  cells: SuiteCellResult[];
}

/** Groups a suite's outcomes by cell (backend × workload × fault × fencing) with each cell's evidence. */
export function suiteResults(outcomes: readonly SuiteOutcome[]): SuiteResults {
  const groups = new Map<string, { cell: Cell; outcomes: SuiteOutcome[] }>();
  for (const outcome of outcomes) {
    const cell = outcome.run ? cellOf(outcome.run.meta) : plannedCell(outcome);
    const key = cellKey(cell);
    const group = groups.get(key) ?? { cell, outcomes: [] };
    group.outcomes.push(outcome);
    groups.set(key, group);
  }
  const cells = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, { cell, outcomes: here }]): SuiteCellResult => {
      const ran = here.flatMap((o) => (o.run ? [o.run] : []));
      return {
        ...cell,
        workloads: [...new Set(here.map((o) => String(o.entry.options.workload)))].sort(),
        ...nullWhereUnknown(
          cellEvidence(ran.map((r) => ({ verdict: r.verdict, firstViolationMs: firstViolationOf(r.dir) }))),
        ),
        notRun: here.length - ran.length,
        runIds: ran.map((r) => r.id),
      };
    });
  return {
    kind: 'fencekit-suite',
    writtenAt: new Date().toISOString(),
    interval: 'Wilson score, 95 %',
    firstViolationMs: FIRST_VIOLATION_MEASURE,
    cells,
  };
}

export function writeSuiteResults(out: string, outcomes: readonly SuiteOutcome[]): SuiteResults {
  const results = suiteResults(outcomes);
  writeOwnFile(join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  return results;
}

/** The cell an entry that never ran would have filled (its faults as asked, fencing as asked). */
function plannedCell(outcome: SuiteOutcome): Cell {
  const o = outcome.entry.options;
  const faults = typeof o.fault === 'string' ? o.fault.split(',').map((f) => f.trim()) : (o.fault ?? []);
  return cellOf({
    backend: o.backend,
    workload: String(o.workload),
    faults: faults.filter((f) => f && f !== 'none'),
    scenario: o.scenario ?? null,
    fencing: o.fencing ?? true,
  });
}

/** A run's time to its first violation, from its results.json (undefined if unreadable). */
function firstViolationOf(dir: string): number | null | undefined {
  try {
    const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as RunResults;
    return results.summary.firstViolationMs;
  } catch {
    return undefined;
  }
}

function nullWhereUnknown(evidence: CellEvidence) {
  return {
    ...evidence,
    rate: evidence.rate ?? null,
    interval: evidence.interval ?? null,
    medianFirstViolationMs: evidence.medianFirstViolationMs ?? null,
  };
}
