import { readFile } from 'node:fs/promises';
import { HistoryParseError, HistoryShapeError, PairingError } from './errors.js';
import { parseJepsenEdn } from './jepsen-edn.js';
import { parseHistoryJsonl, readHistoryJsonlLines } from './jsonl.js';
import { OperationPairer, pairOperations } from './pairing.js';
import { parsePorcupineLog } from './porcupine-log.js';
import type { Operation } from './types.js';

/** The history formats the checker reads. */
export type HistoryFormat = 'jsonl' | 'edn' | 'porcupine-log';

/** Guesses a format from the file name: `.jsonl`, `.edn`, `.log`; porcupine's kv `.txt` files are EDN. */
export function formatFromPath(path: string): HistoryFormat | undefined {
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
 * Reads and pairs a history file; the format defaults to the one its extension names. JSONL is
 * streamed line by line, so only the operations are held in memory, not the text.
 */
export async function loadOperations(path: string, format?: HistoryFormat): Promise<Operation[]> {
  const chosen = format ?? formatFromPath(path);
  if (chosen === 'jsonl') {
    const pairer = new OperationPairer();
    let line = 0;
    try {
      for await (const [event, at] of readHistoryJsonlLines(path)) {
        line = at;
        pairer.add(event);
      }
    } catch (error) {
      if (!(error instanceof PairingError)) throw error;
      throw new HistoryParseError(path, line, error.expected, error.found, { cause: error });
    }
    return pairer.finish();
  }
  if (chosen === undefined) {
    throw new HistoryShapeError(
      path,
      'cannot tell the history format from the file name; pass jsonl, edn or porcupine-log',
    );
  }
  return parseOperations(await readFile(path, 'utf8'), chosen, path);
}
