import type { Fence, Lease } from '@fencekit/core';

/** Sleeps `ms`, ending early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The fence as the history writes it (a decimal string), or undefined for fence-less backends. */
export function fenceOf(lease: Lease<Fence | undefined>): string | undefined {
  return lease.fence === undefined ? undefined : lease.fence.toString();
}

/** Releases a lease as one recorded op; a release that fails is recorded and otherwise ignored. */
export function releaseQuietly(lease: Lease<Fence | undefined>): Promise<void> {
  return lease.release().catch(() => undefined);
}
