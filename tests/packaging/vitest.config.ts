import { defineProject } from 'vitest/config';

/**
 * The packaging test: packs every public package, installs the tarballs into an empty project and uses them as a
 * user would (no source aliases: it must see exactly what npm ships). One file, bounded to a few minutes.
 */
export default defineProject({
  test: {
    name: 'packaging',
    // Part of `npm test`, not of the main job's slow tests (`FENCEKIT_SLOW=1`, see vitest.shared.ts).
    include: process.env.FENCEKIT_SLOW === '1' ? [] : ['packaging.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});
