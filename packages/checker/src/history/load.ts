import { readFile } from 'node:fs/promises';
import { HistoryShapeError } from './errors.js';
import { parseJepsenEdn } from './jepsen-edn.js';
import { parseHistoryJsonl, readHistoryJsonl } from './jsonl.js';
import { pairOperations, pairOperationsAsync } from './pairing.js';
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
  switch (format) {
    case 'jsonl':
      return pairOperations(parseHistoryJsonl(text, file));
    case 'edn':
      return pairOperations(parseJepsenEdn(text, file), { clock: 'index' });
    case 'porcupine-log':
      return parsePorcupineLog(text, file);
  }
}

/**
 * Reads and pairs a history file; the format defaults to the one its extension names. JSONL is
 * streamed line by line, so only the operations are held in memory, not the text.
 */
export async function loadOperations(path: string, format?: HistoryFormat): Promise<Operation[]> {
  const chosen = format ?? formatFromPath(path);
  if (chosen === 'jsonl') return pairOperationsAsync(readHistoryJsonl(path));
  if (chosen === undefined) {
    throw new HistoryShapeError(
      path,
      'cannot tell the history format from the file name; pass jsonl, edn or porcupine-log',
    );
  }
  return parseOperations(await readFile(path, 'utf8'), chosen, path);
}
