import type { HistoryEvent, OpType, ProcessId } from '@fencekit/checker';

export type { HistoryEvent, OpType, ProcessId };

/** An event before the coordinator gives it its place (`index`) in the merged history. */
export type UnindexedEvent = Omit<HistoryEvent, 'index'>;

/** The process id faults are recorded under. */
export const NEMESIS = 'nemesis';
