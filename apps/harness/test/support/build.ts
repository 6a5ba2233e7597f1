import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Child processes run dist/: build the harness (and what it references) before any test forks one. */
export default function setup(): void {
  const harness = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync('npx', ['tsc', '-b', harness], { stdio: 'inherit', cwd: harness });
}
