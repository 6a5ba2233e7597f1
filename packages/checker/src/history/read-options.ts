/** Limits every history reader enforces, so hostile input costs bounded memory, stack and time. */
export interface ReadOptions {
  /**
   * The longest event accepted: a JSONL or porcupine log line in bytes, an EDN op in characters.
   * Longer input (or a file with no line end at all, such as `/dev/zero`) is bad input naming the
   * line. Default 64 MiB.
   */
  maxEventBytes?: number;
  /**
   * Stops the read, e.g. `AbortSignal.timeout(ms)` for a time budget: the reader then throws
   * `HistoryReadAbortedError` (not bad input: the history was not judged).
   */
  signal?: AbortSignal;
  /**
   * Gzipped input (recognised by its first bytes, whatever the file is called) is decompressed as it
   * is read; more than this many bytes once decompressed is bad input (a gzip bomb). Default 4 GiB.
   */
  maxDecompressedBytes?: number;
  /** EDN: read the keyword `:nil` as nil, as knossos histories use it (default true). */
  nilKeyword?: boolean;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 4 * 2 ** 30;

export const DEFAULT_MAX_EVENT_BYTES = 64 * 2 ** 20;

/**
 * Deepest nesting of arrays, objects, maps, vectors or lists inside one event. Histories need a few
 * levels; the cap keeps every recursive walk over values (models, reports) far from the stack's end.
 */
export const MAX_NESTING = 100;

/**
 * Most values (map keys included) in one event, and most collections (arrays, objects, maps, vectors,
 * lists, sets) among them. Text is cheap but objects are not: `{} ` is 3 bytes of EDN and a 200-byte
 * Map, so one op under the 64 MiB cap could build 4 GB and abort the process. Real ops hold a few values,
 * a final read some thousands; past either cap the op is bad input naming its line.
 */
export const MAX_EVENT_VALUES = 1_000_000;
export const MAX_EVENT_COLLECTIONS = 100_000;

/**
 * Most digits of ratios and decimals in one op: reducing a ratio (its gcd) costs time that grows with
 * its digits, and the --timeout deadline is checked between ops, so one op of 30 000 1000-digit ratios
 * ran 70 s past `--timeout 1s`. 100 000 digits (50 ratios of 1000/1000 digits, some tens of ms) is far
 * past any op a Jepsen test writes.
 */
export const MAX_EVENT_BIG_DIGITS = 100_000;

/** Most digits in one integer: far past any id, counter or fence, far below where bigints get slow. */
export const MAX_INTEGER_DIGITS = 1000;
