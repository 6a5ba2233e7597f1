export { CANCEL_TIMEOUT_MS, closeBoundMs, RELEASE_TIMEOUT_MS, WAIT_OVERRUN_MS } from './bounds.js';
export { RedlockClient, type RedlockClientOptions } from './client.js';
export { defaultNodeTimeout, driftFor, fullJitter } from './timing.js';
