export { EdnReader, type EdnValue, ednText, keywordValue } from './edn.js';
export { EdnItemSplitter } from './edn-items.js';
export {
  type EdnAtom,
  EdnChar,
  EdnDecimal,
  EdnFloat,
  EdnMap,
  EdnSet,
  EdnSymbol,
  isEdnAtom,
  Keyword,
  Ratio,
  Tagged,
} from './edn-types.js';
export {
  HistoryParseError,
  HistoryReadAbortedError,
  HistoryReadError,
  HistoryShapeError,
  PairingError,
} from './errors.js';
export { parseJepsenEdn, readJepsenEdn } from './jepsen-edn.js';
export { parseJsonExact } from './json.js';
export {
  formatHistoryEvent,
  HistoryWriter,
  parseHistoryJsonl,
  readHistoryJsonl,
  readHistoryJsonlLines,
  toHistoryEvent,
} from './jsonl.js';
export { readLines, type SourceLine } from './lines.js';
export { formatFromPath, type HistoryFormat, loadOperations, pairLines, parseOperations } from './load.js';
export { OperationPairer, type PairingOptions, pairOperations, pairOperationsAsync } from './pairing.js';
export { parsePorcupineLog, readPorcupineLog } from './porcupine-log.js';
export {
  DEFAULT_MAX_EVENT_BYTES,
  MAX_EVENT_BIG_DIGITS,
  MAX_EVENT_COLLECTIONS,
  MAX_EVENT_VALUES,
  MAX_INTEGER_DIGITS,
  MAX_NESTING,
  type ReadOptions,
} from './read-options.js';
export { showValue } from './show.js';
export type { HistoryEvent, Operation, OpType, ProcessId, Verdict } from './types.js';
