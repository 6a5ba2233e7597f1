export { HistoryParseError, HistoryShapeError } from './errors.js';
export {
  formatHistoryEvent,
  HistoryWriter,
  parseHistoryJsonl,
  readHistoryJsonl,
  toHistoryEvent,
} from './jsonl.js';
export type { HistoryEvent, Operation, OpType, ProcessId, Verdict } from './types.js';
