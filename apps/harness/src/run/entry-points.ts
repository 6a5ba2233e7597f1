import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Child processes always run the built JavaScript in dist/, also when the coordinator itself runs from
 * TypeScript sources under Vitest: a SIGSTOP must land on a plain node process, not a loader.
 */
const packageRoot = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('fencekit: cannot find the harness package root');
    dir = parent;
  }
  return dir;
})();

export type EntryPoint = 'client/main.js' | 'resource/main.js' | 'backends/memory-server.js';

export function entryPoint(name: EntryPoint): string {
  const path = join(packageRoot, 'dist', name);
  if (!existsSync(path)) {
    throw new Error(`fencekit: ${path} is missing; build the harness first (npx tsc -b apps/harness)`);
  }
  return path;
}

export { packageRoot };
