export { type LaneViolation, renderLockLanes } from './lanes.js';
export { type PartitionView, toPartitionView } from './operations.js';
export { type RenderableResult, type RenderOptions, renderHtml } from './render.js';
