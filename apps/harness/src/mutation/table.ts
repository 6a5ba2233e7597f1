/** One mutant's line of the mutation table. */
export interface MutantRow {
  mutant: string;
  backend: string;
  /** Its exposure as the baselines name it (see `settingOf`). */
  setting: string;
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

/**
 * The checkers that convicted a mutant and never the unmutated adapter under the same setting: only
 * those convictions are the mutant's doing. A mutant convicted only by checkers that also convicted
 * the unmutated adapter is not proven.
 */
export function attributable(row: MutantRow, baselines: readonly BaselineRow[]): string[] {
  const baseline = baselines.find((b) => b.backend === row.backend && b.setting === row.setting);
  return row.convictedBy.filter((c) => !baseline?.convictedBy.includes(c));
}

/** The mutation table in Markdown (README and terminal alike). */
export function mutationTable(rows: readonly MutantRow[], baselines: readonly BaselineRow[]): string {
  const lines = [
    '| mutant | backend | expected checker | convicted by | seeds tried | harness time to first conviction |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const own = attributable(r, baselines);
    const by = r.convictedBy.map((c) => (own.includes(c) ? c : `${c} (also unmutated)`)).join(', ');
    const verdict =
      r.convictedBy.length === 0
        ? `**not convicted**${r.note ? ` (${r.note})` : ''}`
        : own.length === 0
          ? `**not proven**: ${by}`
          : by;
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
