import { describe, it } from 'vitest';
import { DEFAULT_CAPABILITIES, type LockConformanceOptions, withCheckContext } from './context.js';
import {
  type ElectionConformanceOptions,
  electionChecks,
  missingRequirement,
  withElectionContext,
} from './election-checks.js';
import { lockChecks } from './lock-checks.js';

/** Per-check budget: generous, since expiry checks wait several TTLs on a shared, busy machine. */
function checkTimeout(ttlMs: number, timeScale: number): number {
  return Math.round((30_000 + ttlMs * 8) * timeScale);
}

/**
 * Registers the lock conformance suite with Vitest: one test per check, each on fresh clients and
 * fresh resource names (so suites may share a server). Checks needing a capability the backend lacks
 * are reported as skipped, never silently passed.
 *
 * ```ts
 * describeLockConformance('redis', {
 *   createClient: async () => createRedisLockClient({ port }),
 *   capabilities: { fair: true },
 * });
 * ```
 */
export function describeLockConformance(name: string, options: LockConformanceOptions): void {
  const capabilities = { ...DEFAULT_CAPABILITIES, ...options.capabilities };
  const timeout = checkTimeout(options.ttlMs ?? 500, options.timeScale ?? 1);
  describe(`${name}: lock conformance`, () => {
    for (const check of lockChecks) {
      const lacking = check.requires !== undefined && !capabilities[check.requires];
      const title = lacking ? `${check.title} (needs ${check.requires})` : check.title;
      it.skipIf(lacking)(title, () => withCheckContext(options, (context) => check.run(context)), timeout);
    }
  });
}

/** Registers the election conformance suite with Vitest: one test per check, fresh election names. */
export function describeElectionConformance(name: string, options: ElectionConformanceOptions): void {
  const timeout = checkTimeout(options.ttlMs ?? 500, options.timeScale ?? 1);
  describe(`${name}: election conformance`, () => {
    for (const check of electionChecks) {
      const missing = missingRequirement(check, options);
      const title = missing ? `${check.title} (needs the ${missing} option)` : check.title;
      it.skipIf(missing !== undefined)(
        title,
        () => withElectionContext(options, (context) => check.run(context)),
        timeout,
      );
    }
  });
}
