import { describe, expect, it } from 'vitest';
import { BackgroundWork } from '../src/background.js';
import { unlessAborted } from '../src/wait-scope.js';

describe('BackgroundWork signal', () => {
  it('takes many waiting deletes at once without a MaxListenersExceededWarning (review #19: 60 aborted acquires)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const work = new BackgroundWork();
    const releases: (() => void)[] = [];
    try {
      const waits = Array.from({ length: 40 }, () =>
        unlessAborted(new Promise<void>((resolve) => releases.push(resolve)), work.signal),
      );
      for (const release of releases) release();
      await Promise.all(waits);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
