import { ALIVE_TOUCH_MS, asRoot, touchAliveScript } from './scripts.js';
import type { SshSession } from './session.js';

/**
 * Keeps this run's mark (`<run dir>/alive`) fresh on every node while the run lives, so a later start on the same
 * nodes sees the run as live and leaves it alone. One touch per node every `ALIVE_TOUCH_MS`, over the existing
 * ControlMaster, each bounded by that period; a touch still in flight is not doubled. A failed touch is ignored
 * here: the mark only goes stale, which is what a lost node should look like to a later start.
 */
export class AliveMarks {
  private readonly timer: NodeJS.Timeout;
  private readonly inFlight = new Set<SshSession>();

  constructor(
    private readonly sessions: readonly SshSession[],
    private readonly dir: string,
  ) {
    this.timer = setInterval(() => this.touchAll(), ALIVE_TOUCH_MS);
    // The marks must never keep the process alive by themselves.
    this.timer.unref();
  }

  private touchAll(): void {
    for (const session of this.sessions) {
      if (this.inFlight.has(session)) continue;
      this.inFlight.add(session);
      session
        .run(asRoot(touchAliveScript(this.dir)), { timeoutMs: ALIVE_TOUCH_MS, what: 'touching the run mark' })
        .catch(() => undefined)
        .finally(() => this.inFlight.delete(session));
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
