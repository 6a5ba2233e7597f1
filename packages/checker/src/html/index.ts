export { type LaneViolation, renderLockLanes } from './lanes.js';
/** The one HTML escaper of the repo (text and attribute values), shared with the harness's pages. */
export { esc as escapeHtml } from './markup.js';
export { type PartitionView, toPartitionView } from './operations.js';
export { type RenderableResult, type RenderOptions, renderHtml } from './render.js';
