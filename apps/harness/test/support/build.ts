import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Child processes run dist/: build the harness (and what it references) before any test forks one.
 * A failed build stops the tests unless a previous build is there to run (then it warns: the tests
 * may run an older build).
 */
export default function setup(): void {
  const harness = fileURLToPath(new URL('../..', import.meta.url));
  try {
    execFileSync('npx', ['tsc', '-b', harness], { stdio: 'pipe', cwd: harness });
  } catch (error) {
    const output = String((error as { stdout?: unknown }).stdout ?? error);
    if (!existsSync(`${harness}/dist/client/main.js`)) throw new Error(`harness build failed:\n${output}`);
    process.stderr.write(`warning: harness build failed, testing the previous dist/:\n${output}\n`);
  }
}
