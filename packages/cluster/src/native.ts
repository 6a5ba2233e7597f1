import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('../', import.meta.url));
const SOURCES = ['clockshim.c', 'pdeathsig.c'].map((file) => `${packageRoot}native/${file}`);
const BUILD_SCRIPT = `${packageRoot}scripts/build-native.sh`;
const SHIM = 'libfencekit-clockshim.so';
const PDEATHSIG = 'fencekit-pdeathsig';
const PLATFORM = `${process.platform}-${process.arch}`;

let built: { dir: string | undefined; error: string | undefined } | undefined;

/**
 * Where the helpers for this platform are: the package's own `native/build/` (shipped in the tarball, built by
 * `prepack`; in the repository by setup), when built for this platform; otherwise a folder of the user's cache,
 * `$FENCEKIT_NATIVE_DIR` or `$XDG_CACHE_HOME/fencekit/native/<platform>-<hash of the sources>` (never inside
 * node_modules), built there with gcc on first use. A failure is remembered and explained by `clockShimError`.
 */
function ensureBuilt(): void {
  if (built) return;
  const shipped = `${packageRoot}native/build`;
  if (helpersIn(shipped, true)) {
    built = { dir: shipped, error: undefined };
    return;
  }
  const cache = nativeCacheDir();
  if (helpersIn(cache, false)) {
    built = { dir: cache, error: undefined };
    return;
  }
  try {
    execFileSync('bash', [BUILD_SCRIPT, cache], { stdio: 'pipe', timeout: 60_000 });
    built = helpersIn(cache, false)
      ? { dir: cache, error: undefined }
      : { dir: undefined, error: `building the native helpers into ${cache} produced no ${SHIM}` };
  } catch (error) {
    const detail = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    const noCompiler = /gcc: (command )?not found|No such file or directory.*gcc/.test(detail);
    built = {
      dir: undefined,
      error: noCompiler
        ? `@fencekit/cluster ships native helpers for ${shippedPlatform() ?? 'no platform'}, not ${PLATFORM}, and no C compiler (gcc) is installed to build them (e.g. apt-get install build-essential)`
        : `building the native helpers for ${PLATFORM} into ${cache} failed: ${detail}`,
    };
  }
}

function helpersIn(dir: string, mayLackPlatform: boolean): boolean {
  if (!existsSync(join(dir, SHIM)) || !existsSync(join(dir, PDEATHSIG))) return false;
  const platformFile = join(dir, 'platform');
  // A repository checkout built by an older setup has no platform file: it was built on this machine.
  if (!existsSync(platformFile)) return mayLackPlatform;
  return readFileSync(platformFile, 'utf8').trim() === PLATFORM;
}

function shippedPlatform(): string | undefined {
  const file = `${packageRoot}native/build/platform`;
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

function nativeCacheDir(): string {
  if (process.env.FENCEKIT_NATIVE_DIR) return process.env.FENCEKIT_NATIVE_DIR;
  const hash = createHash('sha256');
  for (const source of SOURCES) hash.update(existsSync(source) ? readFileSync(source) : source);
  const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cacheHome, 'fencekit', 'native', `${PLATFORM}-${hash.digest('hex').slice(0, 12)}`);
}

/**
 * The clock shim library. Undefined (and the reason through `clockShimError`) when it cannot be built, so clusters
 * still start, without clock faults.
 */
export function clockShimPath(): string | undefined {
  ensureBuilt();
  return built?.dir === undefined ? undefined : join(built.dir, SHIM);
}

/** The launcher that ties a server's life to ours (PR_SET_PDEATHSIG), when it could be built. */
export function pdeathsigPath(): string | undefined {
  ensureBuilt();
  return built?.dir === undefined ? undefined : join(built.dir, PDEATHSIG);
}

export function clockShimError(): string | undefined {
  return built?.error;
}

/** Writes the skew the shim reads ("<offset_ns> <rate>"), atomically so the shim never sees half a line. */
export function writeClockSkew(file: string, offsetMs: number, rate: number): void {
  const offsetNs = BigInt(Math.round(offsetMs)) * 1_000_000n;
  writeFileSync(`${file}.tmp`, `${offsetNs} ${rate}\n`);
  renameSync(`${file}.tmp`, file);
}
