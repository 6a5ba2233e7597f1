/**
 * The one duration and size syntax of fencekit's command lines (`fencekit-check --timeout/--memory` and
 * every duration flag of `fencekit`), so a value means the same to both tools.
 */

/** A duration or size that does not parse; the message says what was expected. */
export class UnitSyntaxError extends Error {
  override readonly name = 'UnitSyntaxError';
}

const DURATION_UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * "500ms", "60s", "1.5m", "2h", or a bare number of seconds → whole milliseconds (rounded), above zero.
 * Throws `UnitSyntaxError` otherwise.
 */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) {
    throw new UnitSyntaxError(
      `"${text}" is not a duration (examples: 500ms, 30s, 2m, 1h; a bare number is seconds)`,
    );
  }
  const ms = Math.round(Number(match[1]) * DURATION_UNITS[(match[2] ?? 's') as keyof typeof DURATION_UNITS]);
  if (!(ms > 0)) throw new UnitSyntaxError(`"${text}" is not a duration above zero (at least 1ms)`);
  return ms;
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
};

/** "512MiB", "1GiB", "300MB", or a bare number of bytes → whole bytes, at least one. Throws `UnitSyntaxError`. */
export function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/i.exec(text.trim());
  if (match === null) throw new UnitSyntaxError(`"${text}" is not a size (examples: 512MiB, 1GiB, 300MB)`);
  const bytes = Math.floor(Number(match[1]) * (SIZE_UNITS[(match[2] ?? 'b').toLowerCase()] ?? 1));
  if (!(bytes >= 1)) throw new UnitSyntaxError(`"${text}" is not a size of at least one byte`);
  return bytes;
}
