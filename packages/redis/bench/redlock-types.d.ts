// redlock@5.0.0-beta.2 ships types its package.json "exports" does not point to; this is the part the
// benchmark uses.
declare module 'redlock' {
  import type { EventEmitter } from 'node:events';
  import type { Redis } from 'ioredis';

  export interface Lock {
    release(): Promise<unknown>;
  }

  export default class Redlock extends EventEmitter {
    constructor(
      clients: Iterable<Redis>,
      settings?: Partial<{
        retryCount: number;
        retryDelay: number;
        retryJitter: number;
        driftFactor: number;
      }>,
    );
    acquire(resources: string[], duration: number): Promise<Lock>;
  }
}
