import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The native helpers as an installed package finds them: the built native.js is laid out like a package in
 * node_modules without native/build/ (a platform the tarball has no helpers for), so they must be built into the
 * user's cache folder, never into the package; without a compiler the reason says so.
 */
const clusterRoot = new URL('../', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'fencekit-native-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function installedCopy(name: string): string {
  const root = join(work, name, 'node_modules', '@fencekit', 'cluster');
  mkdirSync(join(root, 'dist'), { recursive: true });
  cpSync(join(clusterRoot, 'dist/native.js'), join(root, 'dist/native.js'));
  cpSync(join(clusterRoot, 'scripts'), join(root, 'scripts'), { recursive: true });
  mkdirSync(join(root, 'native'));
  for (const file of ['clockshim.c', 'pdeathsig.c'])
    cpSync(join(clusterRoot, 'native', file), join(root, 'native', file));
  cpSync(join(clusterRoot, 'package.json'), join(root, 'package.json'));
  return root;
}

function listAll(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

type Native = typeof import('../src/native.js');

async function withEnv<T>(env: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('native helpers of an installed @fencekit/cluster', () => {
  it('are built into the cache folder, not into node_modules, when the package has none for this platform', async () => {
    const root = installedCopy('with-gcc');
    const before = listAll(root);
    const cache = join(work, 'cache-with-gcc');
    const native = await withEnv({ FENCEKIT_NATIVE_DIR: cache }, async () => {
      const loaded = (await import(pathToFileURL(join(root, 'dist/native.js')).href)) as Native;
      loaded.clockShimPath();
      return loaded;
    });
    expect(native.clockShimError()).toBeUndefined();
    expect(native.clockShimPath()).toBe(join(cache, 'libfencekit-clockshim.so'));
    expect(native.pdeathsigPath()).toBe(join(cache, 'fencekit-pdeathsig'));
    expect(existsSync(join(cache, 'libfencekit-clockshim.so'))).toBe(true);
    // The launcher runs: given its parent's pid, it execs the program.
    const ran = execFileSync(join(cache, 'fencekit-pdeathsig'), [String(process.pid), 'echo', 'ran'], {
      encoding: 'utf8',
    });
    expect(ran.trim()).toBe('ran');
    expect(listAll(root)).toEqual(before);
  });

  it('without a C compiler, say that no helpers ship for this platform and gcc is missing', async () => {
    const root = installedCopy('without-gcc');
    const bin = join(work, 'bin-without-gcc');
    mkdirSync(bin);
    for (const tool of ['bash', 'dirname', 'mkdir', 'mv', 'node']) {
      const path = execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      symlinkSync(path, join(bin, tool));
    }
    const native = await withEnv(
      { FENCEKIT_NATIVE_DIR: join(work, 'cache-without-gcc'), PATH: bin },
      async () => {
        const loaded = (await import(pathToFileURL(join(root, 'dist/native.js')).href)) as Native;
        loaded.clockShimPath();
        return loaded;
      },
    );
    expect(native.clockShimPath()).toBeUndefined();
    expect(native.pdeathsigPath()).toBeUndefined();
    expect(native.clockShimError()).toMatch(
      /ships native helpers for no platform, not linux-\w+, and no C compiler \(gcc\)/,
    );
  });
});
