import {
  etcdEndedLeaseKeepsKey,
  etcdExpiredGrantHandedOut,
  etcdKeepAliveNeverFails,
  etcdNoRecheckAfterGrant,
} from './etcd.js';
import { type Mutant, UnknownMutantError } from './mutant.js';
import { redisFenceBeforeGrant, redisReleaseAnyHolder, redisValidityFromAnswer } from './redis.js';
import { redlockCloseUnbounded, redlockHalfQuorum, redlockNoDrift } from './redlock.js';
import { redisSemaphoreExtraPermit } from './shared-locks.js';
import {
  zkCreateBoundToSignal,
  zkReclaimLeavesOldLeaseArmed,
  zkValidityUncapped,
  zkWatchAllChildren,
  zkWithdrawGivesUp,
} from './zk.js';

/** Every mutant, in the order the mutation table lists them. */
export const MUTANTS: readonly Mutant[] = [
  redisReleaseAnyHolder,
  redisFenceBeforeGrant,
  redisValidityFromAnswer,
  redisSemaphoreExtraPermit,
  redlockHalfQuorum,
  redlockNoDrift,
  redlockCloseUnbounded,
  zkWatchAllChildren,
  zkReclaimLeavesOldLeaseArmed,
  zkValidityUncapped,
  zkWithdrawGivesUp,
  zkCreateBoundToSignal,
  etcdKeepAliveNeverFails,
  etcdExpiredGrantHandedOut,
  etcdNoRecheckAfterGrant,
  etcdEndedLeaseKeepsKey,
];

/** The mutant named `name`; `UnknownMutantError` (listing the known names) otherwise. */
export function findMutant(name: string): Mutant {
  const mutant = MUTANTS.find((m) => m.name === name);
  if (mutant === undefined)
    throw new UnknownMutantError(
      name,
      MUTANTS.map((m) => m.name),
    );
  return mutant;
}
