import { HistoryParseError, HistoryShapeError, PairingError } from './errors.js';
import { parseJepsenEdn, readJepsenEdn } from './jepsen-edn.js';
import { parseHistoryJsonl, readHistoryJsonlLines } from './jsonl.js';
import { OperationPairer, type PairingOptions, pairOperations } from './pairing.js';
import { parsePorcupineLog, readPorcupineLog } from './porcupine-log.js';
import type { ReadOptions } from './read-options.js';
import type { HistoryEvent, Operation } from './types.js';

/** The history formats the checker reads. */
export type HistoryFormat = 'jsonl' | 'edn' | 'porcupine-log';

/**
 * Guesses a format from the file name: `.jsonl`, `.edn`, `.log`; porcupine's kv `.txt` files are EDN.
 * A `.gz` ending is looked through (`history.edn.gz` is EDN); the readers decompress gzip themselves.
 */
export function formatFromPath(file: string): HistoryFormat | undefined {
  const path = file.endsWith('.gz') ? file.slice(0, -3) : file;
  if (path.endsWith('.jsonl') || path.endsWith('.json')) return 'jsonl';
  if (path.endsWith('.edn') || path.endsWith('.txt')) return 'edn';
  if (path.endsWith('.log')) return 'porcupine-log';
  return undefined;
}

/**
 * Text of a history → paired operations, each format with its own semantics: JSONL pairs by `time`,
 * Jepsen EDN by file order with `fail` ops dropped, porcupine logs as `parsePorcupineLog` documents.
 */
export function parseOperations(text: string, format: HistoryFormat, file = '<input>'): Operation[] {
  const lines: number[] = [];
  switch (format) {
    case 'jsonl':
      return withLines(file, lines, () => pairOperations(parseHistoryJsonl(text, file, lines)));
    case 'edn':
      return withLines(file, lines, () =>
        pairOperations(parseJepsenEdn(text, file, lines), { clock: 'index' }),
      );
    case 'porcupine-log':
      return parsePorcupineLog(text, file);
  }
}

/** Turns a pairing error's event position into the file and line it came from. */
function withLines<T>(file: string, lines: readonly number[], pair: () => T): T {
  try {
    return pair();
  } catch (error) {
    if (!(error instanceof PairingError)) throw error;
    throw new HistoryParseError(file, lines[error.position] ?? 0, error.expected, error.found, {
      cause: error,
    });
  }
}

/**
 * Reads and pairs a history file; the format defaults to the one its extension names. Every format is
 * streamed line by line, so only the operations are held in memory, not the text; `options` bound
 * the longest event and let a signal stop the read (see `ReadOptions`). Pairing errors name the file
 * and line of the event.
 */
export async function loadOperations(
  path: string,
  format?: HistoryFormat,
  options: ReadOptions = {},
): Promise<Operation[]> {
  const chosen = format ?? formatFromPath(path);
  switch (chosen) {
    case 'jsonl':
      return pairLines(path, readHistoryJsonlLines(path, path, options), {});
    case 'edn':
      return pairLines(path, readJepsenEdn(path, path, options), { clock: 'index' });
    case 'porcupine-log':
      return readPorcupineLog(path, path, options);
    case undefined:
      throw new HistoryShapeError(
        path,
        'cannot tell the history format from the file name; pass jsonl, edn or porcupine-log',
      );
  }
}

/**
 * Pairs events read with their line numbers; a pairing error becomes a `HistoryParseError` naming the
 * file and the line of the event that did not pair. `onEvent` sees every event (e.g. to keep them).
 */
export async function pairLines(
  file: string,
  events: AsyncIterable<[HistoryEvent, number]>,
  options: PairingOptions,
  onEvent?: (event: HistoryEvent) => void,
): Promise<Operation[]> {
  const pairer = new OperationPairer(options);
  for await (const [event, line] of events) {
    onEvent?.(event);
    try {
      pairer.add(event);
    } catch (error) {
      if (!(error instanceof PairingError)) throw error;
      throw new HistoryParseError(file, line, error.expected, error.found, { cause: error });
    }
  }
  return pairer.finish();
}
