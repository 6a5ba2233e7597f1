export { RedlockClient, type RedlockClientOptions } from './client.js';
export { defaultNodeTimeout, driftFor, fullJitter } from './timing.js';
