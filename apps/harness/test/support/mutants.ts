import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Client processes import the built mutants package (dist/), like the harness's own build: the tests
 * that run a mutant build it first (the harness's global setup builds only what the harness references).
 */
export function buildMutants(): void {
  const mutants = fileURLToPath(new URL('../../../../packages/mutants', import.meta.url));
  execFileSync('npx', ['tsc', '-b', mutants], { stdio: 'pipe', cwd: mutants });
}
