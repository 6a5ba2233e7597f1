/** One mutant's line of the mutation table. */
export interface MutantRow {
  mutant: string;
  backend: string;
  /** The checkers the mutant names as expected to convict it. */
  expected: readonly string[];
  /** The checkers that said `illegal` on the convicting run; empty when it was not convicted. */
  convictedBy: string[];
  seedsTried: number;
  /**
   * Harness time to the first conviction: the run phases of the seeds before the convicting one, plus
   * that run's time to its first violation (its whole run phase when the report gives no such time).
   * For a mutant not convicted: the harness time spent on it.
   */
  harnessMs: number;
  /** Why it was not run, or what else the runs said (e.g. `unknown` verdicts). */
  note?: string;
}

/** The unmutated adapter under one mutant's settings: must stay clean for a conviction to mean anything. */
export interface BaselineRow {
  backend: string;
  setting: string;
  seedsTried: number;
  convictions: number;
  convictedBy: string[];
  harnessMs: number;
  note?: string;
}

const seconds = (ms: number) => `${(ms / 1_000).toFixed(1)} s`;

/** The mutation table in Markdown (README and terminal alike). */
export function mutationTable(rows: readonly MutantRow[], baselines: readonly BaselineRow[]): string {
  const lines = [
    '| mutant | backend | expected checker | convicted by | seeds tried | harness time to first conviction |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const verdict =
      r.convictedBy.length > 0
        ? r.convictedBy.join(', ')
        : `**not convicted**${r.note ? ` (${r.note})` : ''}`;
    const time = r.convictedBy.length > 0 ? seconds(r.harnessMs) : `— (${seconds(r.harnessMs)} spent)`;
    lines.push(
      `| ${r.mutant} | ${r.backend} | ${r.expected.join(', ')} | ${verdict} | ${r.seedsTried} | ${time} |`,
    );
  }
  if (baselines.length > 0) {
    lines.push(
      '',
      '| unmutated adapter | setting | seeds | convictions | by | harness time |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const b of baselines) {
      const by = b.convictedBy.length > 0 ? b.convictedBy.join(', ') : '—';
      lines.push(
        `| ${b.backend} | ${b.setting} | ${b.seedsTried} | ${b.convictions}${b.note ? ` (${b.note})` : ''} | ${by} | ${seconds(b.harnessMs)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
