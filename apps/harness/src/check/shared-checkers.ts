import {
  type Checker,
  checkReadWriteLeases,
  checkReadWriteLock,
  checkSemaphore,
  checkSemaphoreLeases,
} from '@fencekit/checker';
import { type History, judge } from './judge.js';

/**
 * The checkers of the shared-lock workloads, each in two views. `semaphore` / `rwlock` judge what the
 * resource saw (more than N permits inside; a writer inside with anyone; a read served under a
 * superseded fence, a write accepted below a fence that entered); `semaphore-lease` / `rwlock-lease`
 * judge the clients' own beliefs (grants believed valid at once), the primitive's promise itself. The
 * semaphore's limit is read from the history (every entry and grant records it). With fencing on, the
 * resource refused stale read-write fences, so an overlap past the earlier holder's believed lease with
 * a higher fence after it is the fence's to protect, not the lock's (as `checkMutexWithinLeases`).
 */
export function sharedLockCheckers(
  workload: 'semaphore' | 'rwlock',
  fencing: boolean,
): Record<string, Checker<History>> {
  if (workload === 'semaphore') {
    return {
      semaphore: judge((h) => checkSemaphore(h)),
      'semaphore-lease': judge((h) => checkSemaphoreLeases(h)),
    };
  }
  return {
    rwlock: judge((h) => checkReadWriteLock(h, { fencing })),
    'rwlock-lease': judge((h) => checkReadWriteLeases(h)),
  };
}
