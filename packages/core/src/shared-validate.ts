import type { SemaphoreOptions } from './contract-shared.js';
import { InvalidArgumentError } from './errors.js';
import { assertPermits, assertResource, normalizeAcquire, normalizeTryAcquire } from './validate.js';

/** Validates `semaphore(name, { permits })`: a resource name and a permit count. */
export function normalizeSemaphore(name: unknown, options: unknown): { name: string; permits: number } {
  assertResource(name);
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError('options', options, 'an object with permits');
  }
  const { permits } = options as Partial<SemaphoreOptions>;
  assertPermits('permits', permits);
  return { name, permits };
}

/** Validates a semaphore acquire: `acquire`'s options plus `permits` (default 1, at most `limit`). */
export function normalizeSemaphoreAcquire(
  name: string,
  limit: number,
  options: unknown,
): ReturnType<typeof normalizeAcquire> & { permits: number } {
  const request = normalizeAcquire(name, options as Record<string, unknown> | undefined);
  // Absent means 1; null is a value, refused like any other non-count (`??` would take it for absent).
  const given = (options as { permits?: unknown }).permits;
  const permits = given === undefined ? 1 : given;
  assertPermits('permits', permits, limit);
  return { ...request, permits };
}

/** Validates a semaphore tryAcquire: `tryAcquire`'s options plus `permits`. */
export function normalizeSemaphoreTryAcquire(
  name: string,
  limit: number,
  options: unknown,
): ReturnType<typeof normalizeTryAcquire> & { permits: number } {
  const request = normalizeTryAcquire(name, options as Record<string, unknown> | undefined);
  const given = (options as { permits?: unknown }).permits;
  const permits = given === undefined ? 1 : given;
  assertPermits('permits', permits, limit);
  return { ...request, permits };
}
