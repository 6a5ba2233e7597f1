import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('../', import.meta.url));
const SHIM = `${packageRoot}native/build/libfencekit-clockshim.so`;
const PDEATHSIG = `${packageRoot}native/build/fencekit-pdeathsig`;
const BUILD_SCRIPT = `${packageRoot}scripts/build-native.sh`;

let built: { path: string | undefined; error: string | undefined } | undefined;

/** Builds the native helpers with gcc on first use when setup has not built them yet; remembers a failure. */
function ensureBuilt(): void {
  if (built) return;
  try {
    if (!existsSync(SHIM) || !existsSync(PDEATHSIG)) {
      execFileSync('bash', [BUILD_SCRIPT], { stdio: 'pipe', timeout: 60_000 });
    }
    built = { path: SHIM, error: undefined };
  } catch (error) {
    built = { path: undefined, error: `building the native helpers failed: ${(error as Error).message}` };
  }
}

/**
 * The clock shim library. Undefined (and the reason through `clockShimError`) when it cannot be built, so clusters
 * still start, without clock faults.
 */
export function clockShimPath(): string | undefined {
  ensureBuilt();
  return built?.path;
}

/** The launcher that ties a server's life to ours (PR_SET_PDEATHSIG), when it could be built. */
export function pdeathsigPath(): string | undefined {
  ensureBuilt();
  return existsSync(PDEATHSIG) ? PDEATHSIG : undefined;
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
