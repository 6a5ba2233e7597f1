import { describe, it } from 'vitest';
import { readWriteLockChecks } from './rwlock-checks.js';
import { semaphoreChecks } from './semaphore-checks.js';
import {
  type AnyReadWriteLockClient,
  type AnySemaphoreClient,
  type SharedCheck,
  type SharedConformanceOptions,
  withSharedContext,
} from './shared-context.js';

function register<C extends { close(): Promise<void> }>(
  title: string,
  checks: readonly SharedCheck<C>[],
  options: SharedConformanceOptions<C>,
): void {
  const timeScale = options.timeScale ?? 1;
  const timeout = Math.round((30_000 + (options.ttlMs ?? 500) * 8) * timeScale);
  const capabilities = { blocking: true, expiry: true, cleanClose: true, ...options.capabilities };
  describe(title, () => {
    for (const check of checks) {
      const lacking = check.requires !== undefined && !capabilities[check.requires];
      const name = lacking ? `${check.title} (needs ${check.requires})` : check.title;
      it.skipIf(lacking)(name, () => withSharedContext(options, (context) => check.run(context)), timeout);
    }
  });
}

/** Registers the semaphore conformance suite with Vitest: one test per check, fresh clients and names. */
export function describeSemaphoreConformance(
  name: string,
  options: SharedConformanceOptions<AnySemaphoreClient>,
): void {
  register(`${name}: semaphore conformance`, semaphoreChecks, options);
}

/** Registers the read-write lock conformance suite with Vitest. */
export function describeReadWriteLockConformance(
  name: string,
  options: SharedConformanceOptions<AnyReadWriteLockClient>,
): void {
  register(`${name}: read-write lock conformance`, readWriteLockChecks, options);
}

/** Runs one semaphore check outside any test framework (e.g. to show the suite catches a broken client). */
export function runSemaphoreCheck(
  id: string,
  options: SharedConformanceOptions<AnySemaphoreClient>,
): Promise<void> {
  const check = semaphoreChecks.find((c) => c.id === id);
  if (!check) throw new Error(`No semaphore check "${id}"`);
  return withSharedContext(options, (context) => check.run(context));
}

/** Runs one read-write lock check outside any test framework. */
export function runReadWriteLockCheck(
  id: string,
  options: SharedConformanceOptions<AnyReadWriteLockClient>,
): Promise<void> {
  const check = readWriteLockChecks.find((c) => c.id === id);
  if (!check) throw new Error(`No read-write lock check "${id}"`);
  return withSharedContext(options, (context) => check.run(context));
}
