/**
 * What a user gets from `npm install @fencekit/<x>`: every public package is packed (its `prepack` builds it),
 * the tarballs are installed into an empty project beside the user's own ioredis (another 5.x minor than the
 * workspace's), etcd3 and @types/node, and then used only from there: a strict TypeScript consumer is compiled
 * without skipLibCheck, every entry point is loaded with `import` and `require`, publint and arethetypeswrong
 * check each package, `npm publish --dry-run` runs on each tarball, each entry point exports exactly the names in
 * fixtures/exports.json, and fixtures/runtime.mjs starts real servers with the installed @fencekit/cluster (a Redis
 * Cluster among them, for the user's own ioredis `Cluster`) and runs each README's example against them.
 * Checks are soft (expect.soft): one run lists every problem. Registry: none. npm installs with --offline from
 * the cache that setup filled (scripts/warm-packaging-cache.mjs, from consumer-deps.json): tests talk to loopback only.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const PUBLIC = ['core', 'cluster', 'redis', 'redlock', 'zk', 'etcd', 'checker'] as const;
const PRIVATE = ['packages/mutants', 'apps/harness'];
/** Packages whose README has a runnable example: the first ```js block after `## Example`. */
const WITH_EXAMPLE = ['core', 'redis', 'redlock', 'zk', 'etcd'];
const consumerDeps = JSON.parse(readFileSync(new URL('./consumer-deps.json', import.meta.url), 'utf8')) as {
  callerIoredis: string;
  etcd3: string;
  peerCombos: [string, string][];
};
/** The user's ioredis: another minor than the workspace's (checked below). */
const CALLER_IOREDIS = consumerDeps.callerIoredis;
/** Entry points that need an optional peer the consumer does not install. */
const NEEDS_OPTIONAL_PEER = new Set([
  '@fencekit/core/testing',
  '@fencekit/core/sqlite',
  '@fencekit/cluster/vitest',
]);

interface Manifest {
  license?: string;
  private?: boolean;
  publishConfig?: { access?: string };
  repository?: { url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
  sideEffects?: unknown;
  scripts?: Record<string, string>;
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface Packed {
  name: string;
  tarball: string;
  files: string[];
  manifest: Manifest;
}

let work: string;
let consumer: string;
const packed = new Map<string, Packed>();
type Outcome = { code: number; out: string };
/** Checks that only read the tarballs, started as soon as they are installed so they overlap the others. */
let lintOutcomes: Promise<{ name: string; lint: Outcome; attw: Outcome }[]>;
let publishOutcomes: Promise<{ name: string; publish: Outcome }[]>;

function run(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        timeout: options.timeoutMs,
        maxBuffer: 64 << 20,
        env: { ...process.env, ...options.env },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: `${stdout}\n${stderr}` });
      },
    );
  });
}

function entryPoints(pkg: Packed): string[] {
  const keys = Object.keys(pkg.manifest.exports ?? { '.': null }).filter((k) => k !== './package.json');
  return keys.map((k) => (k === '.' ? pkg.name : `${pkg.name}/${k.slice(2)}`));
}

/** The first ```js block after `## Example` (before the next `## ` heading), or undefined. */
function readmeExample(readme: string): string | undefined {
  const section = /^## Example[^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme)?.[1];
  return section === undefined ? undefined : /^```js\n([\s\S]*?)^```/m.exec(section)?.[1];
}

/**
 * Hosts an example would connect to that are not loopback (127.0.0.0/8, localhost, ::1): URL hosts, `ip:port`
 * pairs and `host: 'ip'` options. A bare address in a plain value ('serving at 10.0.0.7') is not a target.
 */
function nonLoopbackHosts(source: string): string[] {
  const hosts = [
    ...source.matchAll(/\b(\d{1,3}(?:\.\d{1,3}){3}):\d/g),
    ...source.matchAll(/\bhost['"]?\s*[:=]\s*['"`]([^'"`]+)['"`]/g),
    ...source.matchAll(/[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s'"`]*@)?([^:/\s'"`,]+)/gi),
  ].map((m) => m[1] ?? '');
  return hosts.filter((h) => !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(h) && !h.includes('$'));
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fencekit-packaging-'));
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  // One at a time, under the build lock: each prepack runs `tsc -b`, which must not race another build.
  for (const name of PUBLIC) {
    const dir = join(root, 'packages', name);
    const { code, out } = await run(
      'flock',
      ['/tmp/fencekit-build.lock', 'npm', 'pack', '--json', '--pack-destination', tarballs],
      { cwd: dir, timeoutMs: 180_000 },
    );
    if (code !== 0) throw new Error(`npm pack of ${name} failed:\n${out}`);
    const info = JSON.parse(out.slice(out.indexOf('['), out.lastIndexOf(']') + 1))[0] as {
      name: string;
      filename: string;
      files: { path: string }[];
    };
    packed.set(name, {
      name: info.name,
      tarball: join(tarballs, info.filename),
      files: info.files.map((f) => f.path),
      manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')),
    });
  }

  consumer = join(work, 'consumer');
  mkdirSync(consumer);
  const typesNode = JSON.parse(
    readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8'),
  ).version;
  const dependencies: Record<string, string> = {
    ioredis: CALLER_IOREDIS,
    etcd3: consumerDeps.etcd3,
    '@types/node': typesNode,
  };
  for (const pkg of packed.values()) dependencies[pkg.name] = `file:${pkg.tarball}`;
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies }, null, 2),
  );
  const install = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: consumer,
    timeoutMs: 240_000,
  });
  if (install.code !== 0)
    throw new Error(
      `npm install --offline of the tarballs failed (is npm's cache filled? bash scripts/setup.sh runs scripts/warm-packaging-cache.mjs):\n${install.out}`,
    );

  const bin = (name: string) => join(root, 'node_modules/.bin', name);
  lintOutcomes = Promise.all(
    [...packed.values()].map(async (pkg) => ({
      name: pkg.name,
      lint: await run(bin('publint'), ['run', '--strict', '--pack', 'false'], {
        cwd: join(consumer, 'node_modules', pkg.name),
        timeoutMs: 150_000,
      }),
      // node16 profile: node10 resolution predates `exports`; and a require() resolving to ESM is how Node
      // >= 20.19 (our engines) loads these packages from CommonJS (load.cjs below proves it works).
      attw: await run(
        bin('attw'),
        [pkg.tarball, '--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'ascii'],
        { cwd: work, timeoutMs: 150_000 },
      ),
    })),
  );
  publishOutcomes = Promise.all(
    [...packed.values()].map(async (pkg) => ({
      name: pkg.name,
      publish: await run('npm', ['publish', '--dry-run', '--tag', 'packaging-test', pkg.tarball], {
        cwd: work,
        timeoutMs: 150_000,
      }),
    })),
  );
}, 600_000);

afterAll(() => {
  if (work && !process.env.FENCEKIT_KEEP_PACKAGING) rmSync(work, { recursive: true, force: true });
});

describe('tarballs', () => {
  it('carry LICENSE, README and CHANGELOG, and no build leftovers, demos, benchmarks or dangling source maps', () => {
    for (const [name, pkg] of packed) {
      const files = new Set(pkg.files);
      for (const needed of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json']) {
        expect.soft(files.has(needed), `${name}: ${needed} shipped`).toBe(true);
      }
      const leftovers = pkg.files.filter(
        (f) =>
          f.endsWith('.tsbuildinfo') ||
          /(^|\/)demo\./.test(f) ||
          // core's `./bench` is an exported entry point (shared benchmark statistics); no other bench ships.
          (/(^|\/)bench\//.test(f) && !(name === 'core' && /^(dist|src)\/bench\//.test(f))),
      );
      expect.soft(leftovers, `${name}: files that must not ship`).toEqual([]);
      const dangling: string[] = [];
      for (const map of pkg.files.filter((f) => f.endsWith('.map'))) {
        const installed = join(consumer, 'node_modules', pkg.name, map);
        const sources = (JSON.parse(readFileSync(installed, 'utf8')) as { sources: string[] }).sources;
        for (const source of sources) {
          const target = join(map, '..', source);
          if (!files.has(target)) dangling.push(`${map} -> ${target}`);
        }
      }
      expect.soft(dangling.slice(0, 5), `${name}: source maps pointing at files not shipped`).toEqual([]);
    }
  });

  it('carry no path into the workspace (../../, shared/data, absolute checkout paths)', () => {
    for (const [name, pkg] of packed) {
      const bad: string[] = [];
      for (const file of pkg.files.filter((f) => /\.(js|ts|md|sh|json)$/.test(f))) {
        const text = readFileSync(join(consumer, 'node_modules', pkg.name, file), 'utf8');
        // Absolute paths of this machine's checkout anywhere; in code, any path out of the package.
        if (/\/work\/(main|shared)\b/.test(text)) bad.push(file);
        else if (
          /\.(js|ts|sh)$/.test(file) &&
          /shared\/data|\$\{packageRoot\}\.\.\/|\.\.\/\.\.\/\.\.\//.test(text)
        ) {
          bad.push(file);
        }
      }
      expect.soft(bad, `${name}: files referring to the repository around the package`).toEqual([]);
    }
  });
});

describe('package.json', () => {
  it('has what publishing needs', () => {
    for (const [name, pkg] of packed) {
      const m = pkg.manifest;
      expect.soft(m.license, `${name}: license`).toBe('MIT');
      expect.soft(m.private, `${name}: not private`).toBeUndefined();
      expect.soft(m.publishConfig?.access, `${name}: publishConfig.access`).toBe('public');
      expect.soft(typeof m.repository?.url, `${name}: repository.url`).toBe('string');
      expect.soft(m.repository?.directory, `${name}: repository.directory`).toBe(`packages/${name}`);
      expect.soft(typeof m.homepage, `${name}: homepage`).toBe('string');
      expect.soft(typeof m.bugs?.url, `${name}: bugs.url`).toBe('string');
      expect.soft(m.sideEffects, `${name}: sideEffects`).toBe(false);
      expect.soft(typeof m.scripts?.prepack, `${name}: prepack builds`).toBe('string');
      for (const [key, conditions] of Object.entries(m.exports ?? {})) {
        if (typeof conditions !== 'object' || conditions === null) continue;
        const c = conditions as Record<string, string>;
        expect.soft(typeof c.types, `${name} ${key}: types`).toBe('string');
        expect.soft(typeof c.import, `${name} ${key}: import`).toBe('string');
        expect.soft(typeof (c.require ?? c.default), `${name} ${key}: require or default`).toBe('string');
      }
    }
    for (const dir of PRIVATE) {
      const m = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
      expect.soft(m.private, `${dir} stays private`).toBe(true);
    }
  });

  it('takes the clients users pass in as ranged peer dependencies', () => {
    const peers = (name: string) => packed.get(name)?.manifest.peerDependencies ?? {};
    const deps = (name: string) => packed.get(name)?.manifest.dependencies ?? {};
    for (const name of ['redis', 'redlock']) {
      expect.soft(peers(name).ioredis, `${name}: ioredis peer`).toBe('^5.0.0');
      expect.soft(deps(name).ioredis, `${name}: ioredis not also a pinned dependency`).toBeUndefined();
    }
    expect.soft(peers('etcd').etcd3, 'etcd: etcd3 peer').toBe('^1.1.0');
    expect.soft(deps('etcd').etcd3, 'etcd: etcd3 not also a pinned dependency').toBeUndefined();
    const installed = JSON.parse(readFileSync(join(consumer, 'node_modules/ioredis/package.json'), 'utf8'));
    const workspace = JSON.parse(readFileSync(join(root, 'node_modules/ioredis/package.json'), 'utf8'));
    expect(installed.version).toBe(CALLER_IOREDIS);
    expect(installed.version.split('.')[1]).not.toBe(workspace.version.split('.')[1]);
    // One ioredis in the consumer: the user's (a second copy is what defeated instanceof).
    for (const name of ['redis', 'redlock']) {
      expect
        .soft(
          existsSync(join(consumer, 'node_modules/@fencekit', name, 'node_modules/ioredis')),
          `${name}: own ioredis`,
        )
        .toBe(false);
    }
  });

  it("each README's install line names the package and every peer dependency that is not optional", () => {
    for (const [name, pkg] of packed) {
      const readme = readFileSync(join(consumer, 'node_modules', pkg.name, 'README.md'), 'utf8');
      const install = /^npm install (.*)$/m.exec(readme)?.[1]?.split('#')[0]?.trim().split(/\s+/) ?? [];
      const meta = (pkg.manifest as { peerDependenciesMeta?: Record<string, { optional?: boolean }> })
        .peerDependenciesMeta;
      const required = Object.keys(pkg.manifest.peerDependencies ?? {}).filter(
        (peer) => !meta?.[peer]?.optional,
      );
      const missing = [pkg.name, ...required].filter((needed) => !install.includes(needed));
      expect.soft(missing, `${name}: README install line \`npm install ${install.join(' ')}\``).toEqual([]);
    }
  });

  it("core's optional peers resolve beside current better-sqlite3 and vitest 3 and 4", async () => {
    const core = packed.get('core')!;
    for (const [sqlite, vitest] of consumerDeps.peerCombos) {
      const dir = join(work, `peers-${sqlite}-${vitest}`.replace(/\^/g, ''));
      mkdirSync(dir);
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({
          name: 'peers',
          private: true,
          dependencies: { '@fencekit/core': `file:${core.tarball}`, 'better-sqlite3': sqlite, vitest },
        }),
      );
      const { code, out } = await run(
        'npm',
        ['install', '--package-lock-only', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
        { cwd: dir, timeoutMs: 120_000 },
      );
      expect.soft(code, `better-sqlite3 ${sqlite} + vitest ${vitest}:\n${out.slice(-1500)}`).toBe(0);
    }
  });
});

describe('the installed packages', () => {
  it('compile in a strict TypeScript consumer without skipLibCheck', async () => {
    copyFileSync(join(fixtures, 'consumer.ts'), join(consumer, 'consumer.ts'));
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          lib: ['es2023', 'esnext.disposable'],
          types: ['node'],
          skipLibCheck: false,
          noEmit: true,
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const { code, out } = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: consumer,
      timeoutMs: 120_000,
    });
    expect(out.trim().split('\n').slice(0, 30).join('\n')).toBe('');
    expect(code).toBe(0);
  });

  it('load from every entry point with import and with require', async () => {
    const entries = [...packed.values()].flatMap(entryPoints).filter((e) => !NEEDS_OPTIONAL_PEER.has(e));
    writeFileSync(
      join(consumer, 'load.mjs'),
      `const r = {};\nfor (const e of ${JSON.stringify(entries)}) {\n` +
        `  try { const m = await import(e); r[e] = Object.keys(m).length > 0 ? 'ok' : 'empty'; }\n` +
        `  catch (error) { r[e] = String(error.message).split('\\n')[0]; } }\nconsole.log(JSON.stringify(r));\n`,
    );
    writeFileSync(
      join(consumer, 'load.cjs'),
      `const r = {};\nfor (const e of ${JSON.stringify(entries)}) {\n` +
        `  try { const m = require(e); r[e] = Object.keys(m).length > 0 ? 'ok' : 'empty'; }\n` +
        `  catch (error) { r[e] = String(error.message).split('\\n')[0]; } }\nconsole.log(JSON.stringify(r));\n`,
    );
    for (const script of ['load.mjs', 'load.cjs']) {
      const { out } = await run(process.execPath, ['--no-warnings', script], {
        cwd: consumer,
        timeoutMs: 60_000,
      });
      const line = out.split('\n').find((l) => l.startsWith('{'));
      const loaded = JSON.parse(line ?? '{}') as Record<string, string>;
      const failed = Object.entries(loaded).filter(([, v]) => v !== 'ok');
      expect.soft(failed, `${script}: entry points that did not load`).toEqual([]);
      expect.soft(Object.keys(loaded).length, `${script}: entry points tried`).toBe(entries.length);
    }
  });

  it('export exactly the checked-in public names (fixtures/exports.json), with import and with require', async () => {
    // A name added to or gone from an entry point (an internal re-exported, a second backoff) fails here
    // until fixtures/exports.json says so: the public API changes on purpose only. @fencekit/redis/internal
    // is not public (its own note says it may change in any release) and is only loaded above.
    const expected = JSON.parse(readFileSync(join(fixtures, 'exports.json'), 'utf8')) as Record<
      string,
      string[]
    >;
    const entries = [...packed.values()]
      .flatMap(entryPoints)
      .filter((e) => !NEEDS_OPTIONAL_PEER.has(e) && e !== '@fencekit/redis/internal');
    expect(entries.sort(), 'entry points listed in fixtures/exports.json').toEqual(
      Object.keys(expected).sort(),
    );
    const names = (load: string) =>
      `const r = {};\nfor (const e of ${JSON.stringify(entries)}) {\n` +
      `  try { r[e] = Object.keys(${load}).sort(); } catch (error) { r[e] = [String(error.message)]; } }\n` +
      `console.log(JSON.stringify(r));\n`;
    writeFileSync(join(consumer, 'names.mjs'), names('await import(e)'));
    writeFileSync(join(consumer, 'names.cjs'), names('require(e)'));
    for (const script of ['names.mjs', 'names.cjs']) {
      const { out } = await run(process.execPath, ['--no-warnings', script], {
        cwd: consumer,
        timeoutMs: 60_000,
      });
      const line = out.split('\n').find((l) => l.startsWith('{'));
      expect.soft(line, `${script}:\n${out.slice(-1500)}`).toBeDefined();
      const exported = JSON.parse(line ?? '{}') as Record<string, string[]>;
      for (const entry of entries) {
        const got = exported[entry] ?? [];
        const want = expected[entry] ?? [];
        expect
          .soft(
            { added: got.filter((n) => !want.includes(n)), missing: want.filter((n) => !got.includes(n)) },
            `${script}: ${entry} exports what fixtures/exports.json lists`,
          )
          .toEqual({ added: [], missing: [] });
      }
    }
  });

  it('pass publint and arethetypeswrong', async () => {
    for (const { name, lint, attw } of await lintOutcomes) {
      expect.soft(lint.code, `publint ${name}:\n${lint.out}`).toBe(0);
      expect.soft(attw.code, `attw ${name}:\n${attw.out}`).toBe(0);
    }
  }, 180_000);

  it('publish cleanly (npm publish --dry-run, no warnings)', async () => {
    for (const { name, publish } of await publishOutcomes) {
      expect.soft(publish.code, `npm publish --dry-run ${name}:\n${publish.out}`).toBe(0);
      // Without credentials a dry run always says it would need a login; any other warning is a finding.
      const warnings = (publish.out.match(/npm warn.*/gi) ?? []).filter(
        (w) => !/requires you to be logged in/.test(w),
      );
      expect.soft(warnings, `npm publish --dry-run ${name} warnings`).toEqual([]);
    }
  }, 180_000);

  it("run against real servers: the user's own clients, the cluster from its own package, each README example", async () => {
    const examples: string[] = [];
    for (const name of WITH_EXAMPLE) {
      const readme = readFileSync(join(consumer, 'node_modules/@fencekit', name, 'README.md'), 'utf8');
      const example = readmeExample(readme);
      expect
        .soft(example, `${name}: README has a runnable example (\`## Example\`, then a js block)`)
        .toBeDefined();
      if (example === undefined) continue;
      // Tests may reach only this machine: an example naming any other host is reported, never run.
      const foreign = nonLoopbackHosts(example);
      expect.soft(foreign, `${name}: README example names hosts other than loopback`).toEqual([]);
      if (foreign.length > 0) continue;
      writeFileSync(join(consumer, `example-${name}.mjs`), example);
      examples.push(`example-${name}.mjs`);
    }
    copyFileSync(join(fixtures, 'runtime.mjs'), join(consumer, 'runtime.mjs'));
    const { out } = await run(process.execPath, ['--no-warnings', 'runtime.mjs', ...examples], {
      cwd: consumer,
      timeoutMs: 240_000,
    });
    const line = out.split('\n').find((l) => l.startsWith('RESULTS '));
    expect(line, out.slice(-3000)).toBeDefined();
    const results = JSON.parse(line!.slice('RESULTS '.length)) as Record<
      string,
      { ok: boolean; detail: string }
    >;
    for (const key of [
      'cluster-dockerfile',
      'cluster-start',
      'cluster-writes-nothing-into-its-package',
      'redis-uses-callers-ioredis',
      'redis-leaves-callers-ioredis-open',
      'redlock-uses-callers-ioredis',
      'redis-cluster-start',
      'redis-uses-callers-ioredis-cluster',
      'redis-leaves-callers-ioredis-cluster-open',
      'redlock-refuses-a-cluster-node',
      'zk-shares-callers-session',
      'etcd-uses-callers-etcd3',
      ...examples.map((e) => `example:${e}`),
    ]) {
      expect.soft(results[key]?.ok, `${key}: ${results[key]?.detail ?? 'not run'}`).toBe(true);
    }
  }, 300_000);
});
