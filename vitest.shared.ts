import { fileURLToPath } from 'node:url';
import { configDefaults, defineProject, mergeConfig, type ViteUserConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * Tests run against each package's TypeScript source, not its build output, so a test never reads
 * a stale dist/. Child processes (harness clients) run the built JS; `npm test` builds first.
 */
const sourceAliases = [
  { find: /^@fencekit\/([a-z]+)\/([a-z]+)$/, replacement: `${root}packages/$1/src/$2/index.ts` },
  { find: /^@fencekit\/([a-z]+)$/, replacement: `${root}packages/$1/src/index.ts` },
];

/**
 * Seeded fault matrices (`*.matrix.test.ts` files under test/: whole harness runs over several seeds, backends and
 * faults) take minutes each, so they run in the main job (`npm run test:matrix`, which sets
 * FENCEKIT_MATRIX=1) rather than in every test run: that keeps CI's suite well under its 30 minutes.
 */
const matrixOnly = process.env.FENCEKIT_MATRIX === '1';
const MATRIX_FILES = 'test/**/*.matrix.test.ts';

/** One Vitest project per package; a package adds its own globalSetup, timeouts or pool here. */
export function fencekitProject(name: string, overrides: ViteUserConfig = {}) {
  return mergeConfig(
    defineProject({
      resolve: { alias: sourceAliases },
      test: {
        name,
        include: matrixOnly ? [MATRIX_FILES] : ['test/**/*.test.ts'],
        exclude: matrixOnly ? configDefaults.exclude : [...configDefaults.exclude, MATRIX_FILES],
        testTimeout: 30_000,
        hookTimeout: 240_000,
      },
    }),
    overrides,
  );
}
