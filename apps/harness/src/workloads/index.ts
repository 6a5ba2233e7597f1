import { cas } from './cas.js';
import { cron } from './cron.js';
import { election } from './election.js';
import { inventory } from './inventory.js';
import { mutex } from './mutex.js';
import type { Workload, WorkloadName } from './types.js';

export const workloads: Record<WorkloadName, Workload> = { inventory, mutex, election, cron, cas };
export { WORKLOADS, type WorkloadName } from './types.js';
