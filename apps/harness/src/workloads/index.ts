import { cas } from './cas.js';
import { cron } from './cron.js';
import { election } from './election.js';
import { inventory } from './inventory.js';
import { mutex } from './mutex.js';
import { rwlock } from './rwlock.js';
import { semaphore } from './semaphore.js';
import type { Workload, WorkloadName } from './types.js';

export const workloads: Record<WorkloadName, Workload> = {
  inventory,
  mutex,
  election,
  cron,
  cas,
  semaphore,
  rwlock,
};
export { SHARED_LOCK_WORKLOADS } from './shared-sections.js';
export { WORKLOADS, type WorkloadName } from './types.js';
