import { OptionsError } from '../run/options.js';
import type { MutantSpec } from './mutants-module.js';

/**
 * The mutants a command runs: all of them, or those named in `only` (comma-separated names), or
 * those of the backends in `backends`. An unknown name or backend is an options error naming the
 * known ones; a selection that leaves nothing is one too.
 */
export function selectMutants(
  all: readonly MutantSpec[],
  filter: { only?: string; backends?: string },
): MutantSpec[] {
  const list = (text: string | undefined) =>
    text === undefined
      ? undefined
      : text
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0);
  const names = list(filter.only);
  const backends = list(filter.backends);
  const unknownNames = (names ?? []).filter((n) => !all.some((m) => m.name === n));
  if (unknownNames.length > 0) {
    throw new OptionsError(
      `unknown mutant ${unknownNames.join(', ')}; known mutants: ${all.map((m) => m.name).join(', ')}`,
    );
  }
  const known = [...new Set(all.map((m) => m.backend))];
  const unknownBackends = (backends ?? []).filter((b) => !known.includes(b));
  if (unknownBackends.length > 0) {
    throw new OptionsError(
      `no mutants for backend ${unknownBackends.join(', ')}; mutants exist for: ${known.join(', ')}`,
    );
  }
  const chosen = all.filter(
    (m) =>
      (names === undefined || names.includes(m.name)) &&
      (backends === undefined || backends.includes(m.backend)),
  );
  if (chosen.length === 0) throw new OptionsError('the selection leaves no mutant to run');
  return chosen;
}

/** The mutant named `name` for a run on `backend`; an options error when it is for another backend. */
export function mutantForRun(all: readonly MutantSpec[], name: string, backend: string): MutantSpec {
  const [mutant] = selectMutants(all, { only: name });
  if (mutant === undefined || mutant.backend !== backend) {
    throw new OptionsError(
      `mutant ${name} breaks the ${mutant?.backend} adapter: run it with --backend ${mutant?.backend}`,
    );
  }
  return mutant;
}
