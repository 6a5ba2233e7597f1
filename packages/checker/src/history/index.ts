export { EdnReader, type EdnValue, Keyword } from './edn.js';
export { HistoryParseError, HistoryShapeError, PairingError } from './errors.js';
export { parseJepsenEdn } from './jepsen-edn.js';
export {
  formatHistoryEvent,
  HistoryWriter,
  parseHistoryJsonl,
  readHistoryJsonl,
  readHistoryJsonlLines,
  toHistoryEvent,
} from './jsonl.js';
export { formatFromPath, type HistoryFormat, loadOperations, parseOperations } from './load.js';
export { OperationPairer, type PairingOptions, pairOperations, pairOperationsAsync } from './pairing.js';
export { parsePorcupineLog } from './porcupine-log.js';
export type { HistoryEvent, Operation, OpType, ProcessId, Verdict } from './types.js';
