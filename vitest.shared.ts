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
 * Slow tests run in the main job (`npm run test:slow`, which sets FENCEKIT_SLOW=1) rather than in every test
 * run, to keep CI's suite well under its 30 minutes: the seeded fault matrices (`*.matrix.test.ts` files
 * under test/: whole harness runs over several seeds, backends and faults) and other tests that take
 * minutes or change the host beyond the project's own processes (`*.slow.test.ts`, e.g. a second Docker
 * engine with its own bridge and forwarding rule).
 */
const slowOnly = process.env.FENCEKIT_SLOW === '1';
const SLOW_FILES = ['test/**/*.matrix.test.ts', 'test/**/*.slow.test.ts'];

/** One Vitest project per package; a package adds its own globalSetup, timeouts or pool here. */
export function fencekitProject(name: string, overrides: ViteUserConfig = {}) {
  return mergeConfig(
    defineProject({
      resolve: { alias: sourceAliases },
      test: {
        name,
        include: slowOnly ? SLOW_FILES : ['test/**/*.test.ts'],
        exclude: slowOnly ? configDefaults.exclude : [...configDefaults.exclude, ...SLOW_FILES],
        testTimeout: 30_000,
        hookTimeout: 240_000,
      },
    }),
    overrides,
  );
}
