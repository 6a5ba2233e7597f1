import { describe, expect, it } from 'vitest';
import type { Deployment } from '../src/backends/types.js';
import type { CheckOutcome } from '../src/check/check.js';
import { nowNs } from '../src/history/clock.js';
import type { UnindexedEvent } from '../src/history/event.js';
import { type HangAtClose, hangAtClose, withCloseLeaks } from '../src/nemesis/hang-at-close.js';
import type { ClientHandle, NemesisContext } from '../src/nemesis/nemesis.js';
import { seededRandom } from '../src/nemesis/random.js';
import { EventWatch } from '../src/run/event-watch.js';

/**
 * hang-at-close against scripted clients (their close ops and exits come when the test says), with the
 * harness's own EventWatch carrying their events to the nemesis, as in a run.
 *
 * R4 F4: the node was resumed closeBound + 3 s after the stop message, so a client whose last op hung on
 * the node and began close() late had its close pass. R4 F3: a client process that outlived its settled
 * close() (something left open) was only counted, never judged.
 */
const CLOSE_BOUND_MS = 200;
/** What the fault holds each client's close for: its bound, the client's 2 s overrun record, 1 s more. */
const PER_CLIENT_MS = CLOSE_BOUND_MS + 3_000;

function scripted(clients: number) {
  const watch = new EventWatch();
  let resumed: () => void = () => {};
  const resumedAt = new Promise<number>((resolve) => {
    resumed = () => resolve(nowNs());
  });
  const deployment = {
    nodes: ['n1'],
    faults: { pause: async () => {}, resume: async () => resumed() },
  } as unknown as Deployment;
  const events: UnindexedEvent[] = [];
  const context: NemesisContext = {
    deployment,
    ttlMs: 50,
    sessionMs: 50,
    seed: 1,
    nextWindow: async () => undefined,
    nextEvent: (accept, timeoutMs, signal) => watch.next(accept, timeoutMs, signal),
    record: (event) => events.push(event),
    progress: () => {},
    signal: new AbortController().signal,
    startedAt: performance.now(),
    applied: 0,
  };
  const handles: ClientHandle[] = Array.from({ length: clients }, (_, index) => ({
    index,
    process: index,
    grant: undefined,
    pause() {},
    resume() {},
  }));
  const exits = handles.map(() => {
    let exit: () => void = () => {};
    const promise = new Promise<boolean>((resolve) => {
      exit = () => resolve(true);
    });
    return { promise, exit };
  });
  /** Client `i` records `type` of its close op now. */
  const close = (i: number, type: 'invoke' | 'ok') => {
    const time = nowNs();
    watch.see(handles[i]!, [{ time, process: i, type, f: 'close', value: null }]);
    return time;
  };
  return { context, events, exits, close, resumedAt };
}

const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('hang-at-close', () => {
  it('holds the node until a client that began close() late has run it past its bound, from its own close invoke', async () => {
    const s = scripted(2);
    const hang = (await hangAtClose(s.context, seededRandom(1), CLOSE_BOUND_MS)) as HangAtClose;
    const healed = hang.healAfter(s.exits.map((e) => e.promise));
    // Client 0 closes at once and exits; client 1's last op hung on the node: its close begins 1.5 s later
    // and hangs until the node is back.
    s.close(0, 'invoke');
    s.close(0, 'ok');
    s.exits[0]!.exit();
    await after(1_500);
    const lateInvoke = s.close(1, 'invoke');
    void s.resumedAt.then(() => {
      s.close(1, 'ok');
      s.exits[1]!.exit();
    });
    const summary = await healed;
    const heldMs = ((await s.resumedAt) - lateInvoke) / 1e6;
    expect(heldMs).toBeGreaterThanOrEqual(PER_CLIENT_MS - 50);
    // Bounded in all: never past the overall hold.
    expect(heldMs).toBeLessThan(hang.holdMs);
    expect(summary.evidence).toMatchObject({ exitedBeforeHeal: 1, clients: 2, leaks: [] });
  }, 20_000);

  it('lists a client whose process outlived its settled close() and convicts the run', async () => {
    const s = scripted(2);
    const hang = (await hangAtClose(s.context, seededRandom(1), CLOSE_BOUND_MS)) as HangAtClose;
    const healed = hang.healAfter(s.exits.map((e) => e.promise));
    // Both close at once; client 1 exits, client 0's process stays up (a socket close() left open).
    for (const i of [0, 1]) {
      s.close(i, 'invoke');
      s.close(i, 'ok');
    }
    s.exits[1]!.exit();
    const summary = await healed;
    s.exits[0]!.exit();
    const leaks = summary.evidence?.leaks as { client: number; exitedAfterCloseMs: number | null }[];
    expect(leaks).toEqual([expect.objectContaining({ client: 0, exitedAfterCloseMs: null })]);
    const clean: CheckOutcome = { verdict: 'ok', problems: [], checkers: {} };
    const judged = withCloseLeaks(clean, [summary]);
    expect(judged.verdict).toBe('illegal');
    expect(judged.checkers['close-leak']).toMatchObject({ verdict: 'illegal', violationCount: 1 });
    // A client that exits within the grace of its close is no leak.
    const t = scripted(1);
    const again = (await hangAtClose(t.context, seededRandom(1), CLOSE_BOUND_MS)) as HangAtClose;
    const healedAgain = again.healAfter(t.exits.map((e) => e.promise));
    t.close(0, 'invoke');
    t.close(0, 'ok');
    await after(100);
    t.exits[0]!.exit();
    const fine = await healedAgain;
    expect(fine.evidence).toMatchObject({ leaks: [] });
    expect(withCloseLeaks(clean, [fine]).verdict).toBe('ok');
  }, 20_000);
});
