import { describe, expect, it } from 'vitest';
import { ClientLifecycle } from '../src/client-lifecycle.js';

/** A lease stand-in: counts its releases; `held` turns false once it "expires". */
function lease(expired = false) {
  return {
    held: !expired,
    releases: 0,
    async release() {
      this.releases += 1;
    },
  };
}

describe('ClientLifecycle', () => {
  it('releases on close only the leases still held', async () => {
    const lifecycle = new ClientLifecycle<ReturnType<typeof lease>>('TestClient');
    const live = lease();
    const ended = lease();
    lifecycle.hold(live);
    lifecycle.hold(ended);
    ended.held = false;
    await lifecycle.close(async () => {});
    expect(live.releases).toBe(1);
    expect(ended.releases).toBe(0);
  });

  it('does not keep leases that ended unseen: a caller letting 10 000 expire holds no memory for them', async () => {
    const lifecycle = new ClientLifecycle<ReturnType<typeof lease>>('TestClient');
    const expired = Array.from({ length: 10_000 }, () => lease(true));
    for (const l of expired) lifecycle.hold(l);
    const live = lease();
    lifecycle.hold(live);
    // Every expired lease was swept on the way: none is left for close() to look at.
    let looked = 0;
    for (const l of expired.slice(-64)) {
      Object.defineProperty(l, 'held', {
        get() {
          looked += 1;
          return false;
        },
      });
    }
    await lifecycle.close(async () => {});
    expect(looked).toBeLessThan(64);
    expect(live.releases).toBe(1);
  });
});
