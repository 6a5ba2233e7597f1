export type { HistoryEvent, Operation, OpType, ProcessId, Verdict } from './types.js';
