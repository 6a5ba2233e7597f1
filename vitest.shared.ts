import { fileURLToPath } from 'node:url';
import { defineProject, mergeConfig, type ViteUserConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * Tests run against each package's TypeScript source, not its build output, so a test never reads
 * a stale dist/. Child processes (harness clients) run the built JS; `npm test` builds first.
 */
const sourceAliases = [
  { find: /^@fencekit\/([a-z]+)\/([a-z]+)$/, replacement: `${root}packages/$1/src/$2/index.ts` },
  { find: /^@fencekit\/([a-z]+)$/, replacement: `${root}packages/$1/src/index.ts` },
];

/** One Vitest project per package; a package adds its own globalSetup, timeouts or pool here. */
export function fencekitProject(name: string, overrides: ViteUserConfig = {}) {
  return mergeConfig(
    defineProject({
      resolve: { alias: sourceAliases },
      test: {
        name,
        include: ['test/**/*.test.ts'],
        testTimeout: 30_000,
        hookTimeout: 240_000,
      },
    }),
    overrides,
  );
}
