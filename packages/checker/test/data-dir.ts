import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The shared histories (`../shared/data` beside the clone, or `FENCEKIT_SHARED_DATA`). Missing data
 * fails the suite rather than skipping it: a correctness suite that silently runs nothing is a pass
 * that means nothing.
 */
export function sharedData(): string {
  const dir =
    process.env.FENCEKIT_SHARED_DATA ?? fileURLToPath(new URL('../../../../shared/data/', import.meta.url));
  if (!existsSync(dir)) throw new Error(`shared data not found at ${dir}; set FENCEKIT_SHARED_DATA`);
  return dir.endsWith('/') ? dir : `${dir}/`;
}
