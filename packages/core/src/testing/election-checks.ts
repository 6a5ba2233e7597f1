import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Election, LeaderInfo, Leadership } from '../contract.js';
import { assertRejectsWithCode, delay, waitForAbort, within } from './context.js';
import { electionNameChecks } from './election-checks-names.js';

export interface ElectionConformanceOptions {
  /**
   * A new participant in the election called `name`, with its own connection / session. Called
   * once per candidate (and once per observer), so candidates are as independent as real servers.
   */
  createElection: (name: string) => Promise<Election>;
  /** The session TTL the factory uses; only scales the suite's timeouts. Default 500 ms. */
  ttlMs?: number;
  /** Multiplies every wait and timeout. Default 1. */
  timeScale?: number;
  /** Candidates in the one-leader check. Default 5. */
  candidates?: number;
  /** Prefix for the random election names. */
  namePrefix?: string;
  /**
   * Ends the session behind `leadership` without its participant's help, as when the server expires
   * it or an operator revokes it (etcd: revoke the lease the candidate key is attached to; ZooKeeper:
   * expire the session). Resolves once the server has acted. Without it the session-loss check is
   * skipped: the suite has no other way to make a session end.
   */
  loseSession?: (participant: Election, leadership: Leadership) => Promise<void>;
}

/** What an election check may need beyond candidates; a check needing what the adapter lacks is skipped. */
export type ElectionRequirement = 'loseSession';

export interface ElectionCheckContext {
  readonly candidates: number;
  /** The session TTL the factory uses (`ElectionConformanceOptions.ttlMs`, default 500 ms). */
  readonly ttlMs: number;
  /** This check's election name. */
  readonly name: string;
  /** A fresh participant in this check's election; closed after the check. */
  participant(): Promise<Election>;
  /** A fresh participant in the election called `name` (the factory may refuse it); closed after the check. */
  participantIn(name: string): Promise<Election>;
  /** See `ElectionConformanceOptions.loseSession`; present whenever a check requires it. */
  readonly loseSession: ElectionConformanceOptions['loseSession'];
  scaled(ms: number): number;
}

export interface ElectionCheck {
  readonly id: string;
  readonly title: string;
  /** Skipped when the options do not provide this. */
  readonly requires?: ElectionRequirement;
  run(context: ElectionCheckContext): Promise<void>;
}

/** Why `check` cannot run with `options`, or undefined when it can. */
export function missingRequirement(
  check: ElectionCheck,
  options: ElectionConformanceOptions,
): ElectionRequirement | undefined {
  return check.requires !== undefined && options[check.requires] === undefined ? check.requires : undefined;
}

/** Runs `body` with a fresh election name and closes every participant it opened. */
export async function withElectionContext(
  options: ElectionConformanceOptions,
  body: (context: ElectionCheckContext) => Promise<void>,
): Promise<void> {
  const name = `${options.namePrefix ?? 'fencekit-conformance-election'}-${randomBytes(6).toString('hex')}`;
  const opened: Election[] = [];
  const timeScale = options.timeScale ?? 1;
  try {
    await body({
      candidates: options.candidates ?? 5,
      ttlMs: options.ttlMs ?? 500,
      name,
      loseSession: options.loseSession,
      async participant() {
        const election = await options.createElection(name);
        opened.push(election);
        return election;
      },
      async participantIn(other) {
        const election = await options.createElection(other);
        opened.push(election);
        return election;
      },
      scaled: (ms) => Math.round(ms * timeScale),
    });
  } finally {
    await Promise.allSettled(opened.map((e) => e.close()));
  }
}

/** Runs one election check by id outside any test framework. */
export function runElectionCheck(id: string, options: ElectionConformanceOptions): Promise<void> {
  const check = electionChecks.find((c) => c.id === id);
  if (!check)
    throw new Error(`No election check "${id}"; known: ${electionChecks.map((c) => c.id).join(', ')}`);
  const missing = missingRequirement(check, options);
  if (missing) throw new Error(`Election check "${id}" needs the ${missing} option`);
  return withElectionContext(options, (context) => check.run(context));
}

/** Collects what `observe()` yields in the background until `stop()`. */
function observeInto(election: Election) {
  const controller = new AbortController();
  const seen: (LeaderInfo | null)[] = [];
  const done = (async () => {
    for await (const leader of election.observe({ signal: controller.signal })) seen.push(leader);
  })().catch((error: unknown) => {
    // Ending by our own abort is the normal way out; anything else is a failure to report.
    if (!controller.signal.aborted) throw error;
  });
  return {
    seen,
    /** Resolves once an observed value satisfies `test`; fails after `ms`. */
    async until(test: (leader: LeaderInfo | null) => boolean, ms: number, what: string): Promise<void> {
      const deadline = Date.now() + ms;
      while (!seen.some(test)) {
        if (Date.now() > deadline) assert.fail(`observe() never yielded ${what}; saw ${describeSeen(seen)}`);
        await delay(10);
      }
    },
    async stop(ms: number): Promise<void> {
      controller.abort();
      await within(done, ms, 'observe() after its signal aborted');
    },
  };
}

function describeSeen(seen: readonly (LeaderInfo | null)[]): string {
  return `[${seen.map((l) => (l ? `${l.candidate}@${l.term}` : 'null')).join(', ')}]`;
}

/** Two candidates and a watcher: "first" leads (the watcher has seen it), "second" not yet running. */
async function firstLeaderObserved(context: ElectionCheckContext) {
  const [a, b, watcher] = [
    await context.participant(),
    await context.participant(),
    await context.participant(),
  ];
  const observer = observeInto(watcher);
  const first = await a.campaign('first', { waitMs: context.scaled(5_000) });
  await observer.until((l) => l?.candidate === 'first', context.scaled(5_000), 'the first leader');
  return { a, b, watcher, observer, first };
}

/** Stops the observer and checks it saw "first" before "second"; returns the leaders it saw, in order. */
async function observedInOrder(observer: ReturnType<typeof observeInto>, context: ElectionCheckContext) {
  await observer.stop(context.scaled(5_000));
  const leaders = observer.seen.filter((l): l is LeaderInfo => l !== null);
  const firstAt = leaders.findIndex((l) => l.candidate === 'first');
  const secondAt = leaders.findIndex((l) => l.candidate === 'second');
  assert.ok(firstAt < secondAt, `observed out of order: ${describeSeen(observer.seen)}`);
  return { leaders, first: leaders[firstAt], second: leaders[secondAt] };
}

export const electionChecks: readonly ElectionCheck[] = [
  {
    id: 'one-leader',
    title: 'one leader at a time among N candidates, terms strictly increase',
    async run(context) {
      const elections = await Promise.all(
        Array.from({ length: context.candidates }, () => context.participant()),
      );
      let inside = 0;
      let maxInside = 0;
      const terms: bigint[] = [];
      const leaders = new Set<string>();
      const turns = elections.map(async (election, index) => {
        const leadership = await election.campaign(`candidate-${index}`, { waitMs: context.scaled(25_000) });
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        terms.push(leadership.term);
        leaders.add(leadership.candidate);
        await delay(10);
        assert.ok(leadership.isLeader, `candidate-${index} lost leadership during its turn`);
        inside -= 1;
        await leadership.resign();
      });
      await within(Promise.all(turns), context.scaled(28_000), 'candidates taking turns');
      assert.equal(maxInside, 1, `${maxInside} leaders at once`);
      assert.equal(leaders.size, context.candidates, 'not every candidate led once');
      for (let i = 1; i < terms.length; i++) {
        assert.ok(terms[i]! > terms[i - 1]!, `terms ${terms.join(', ')} are not strictly increasing`);
      }
    },
  },
  {
    id: 'resign-hands-over',
    title: 'resign hands leadership to the next candidate and ends the old leadership',
    async run(context) {
      const [a, b, watcher] = [
        await context.participant(),
        await context.participant(),
        await context.participant(),
      ];
      const first = await a.campaign('first', { waitMs: context.scaled(5_000) });
      let secondWon = false;
      const second = b.campaign('second', { waitMs: context.scaled(20_000) }).then((leadership) => {
        secondWon = true;
        return leadership;
      });
      await delay(context.scaled(100));
      assert.equal(secondWon, false, 'a second candidate won while the first was leading');
      const current = await watcher.leader();
      assert.equal(current?.candidate, 'first');
      assert.equal(current?.term, first.term);
      await first.resign();
      await first.resign();
      assert.equal(first.isLeader, false);
      assert.equal(first.signal.aborted, true, 'resign did not abort the leadership signal');
      const next: Leadership = await within(second, context.scaled(5_000), 'the next candidate after resign');
      assert.ok(next.term > first.term, `term ${next.term} not above ${first.term}`);
      assert.equal((await watcher.leader())?.candidate, 'second');
      await next.resign();
    },
  },
  {
    id: 'observe-yields-changes',
    title: 'observe yields leader changes in order and ends when its signal aborts',
    async run(context) {
      const { b, observer, first } = await firstLeaderObserved(context);
      const second = b.campaign('second', { waitMs: context.scaled(20_000) });
      await first.resign();
      const next = await within(second, context.scaled(5_000), 'the second leader');
      await observer.until((l) => l?.candidate === 'second', context.scaled(5_000), 'the second leader');
      const { leaders, first: firstSeen, second: secondSeen } = await observedInOrder(observer, context);
      assert.equal(firstSeen?.term, first.term);
      assert.equal(secondSeen?.term, next.term);
      for (let i = 1; i < leaders.length; i++) {
        assert.ok(
          leaders[i]!.term >= leaders[i - 1]!.term,
          `terms went back: ${describeSeen(observer.seen)}`,
        );
      }
      await next.resign();
    },
  },
  {
    id: 'campaign-abort-withdraws',
    title: 'an aborted campaign rejects with LockAbortedError and withdraws the candidate',
    async run(context) {
      const [a, b, c] = [
        await context.participant(),
        await context.participant(),
        await context.participant(),
      ];
      const first = await a.campaign('first', { waitMs: context.scaled(5_000) });
      const controller = new AbortController();
      const aborted = assertRejectsWithCode(
        () => b.campaign('withdrawn', { signal: controller.signal, waitMs: context.scaled(20_000) }),
        'aborted',
        'the aborted campaign',
      );
      await delay(context.scaled(100));
      controller.abort();
      await within(aborted, context.scaled(5_000), 'the aborted campaign');
      const third = c.campaign('third', { waitMs: context.scaled(20_000) });
      await first.resign();
      const next = await within(third, context.scaled(5_000), 'the candidate after the withdrawn one');
      assert.equal(next.candidate, 'third');
      assert.equal((await c.leader())?.candidate, 'third', 'the withdrawn candidate became leader');
      await next.resign();
      await assertRejectsWithCode(
        () => b.campaign('pre-aborted', { signal: AbortSignal.abort() }),
        'aborted',
        'a campaign with an aborted signal',
      );
    },
  },
  {
    id: 'leader-null-when-none',
    title: 'leader() is null with no leader, names the leader while there is one',
    async run(context) {
      const [a, watcher] = [await context.participant(), await context.participant()];
      assert.equal(await watcher.leader(), null, 'a fresh election already has a leader');
      const leadership = await a.campaign('only', { waitMs: context.scaled(5_000) });
      const current = await watcher.leader();
      assert.equal(current?.candidate, 'only');
      assert.equal(current?.term, leadership.term);
      await leadership.resign();
      await waitForAbort(leadership.signal, context.scaled(1_000), 'the leadership signal after resign');
      const deadline = Date.now() + context.scaled(5_000);
      while ((await watcher.leader()) !== null) {
        if (Date.now() > deadline) assert.fail('leader() still names a leader after it resigned');
        await delay(10);
      }
    },
  },
  {
    id: 'session-loss-hands-over',
    title: 'a leader whose session is lost stops leading, the next candidate takes over, observers see it',
    requires: 'loseSession',
    async run(context) {
      const loseSession = context.loseSession;
      assert.ok(loseSession, 'the session-loss check ran without loseSession');
      const { a, b, watcher, observer, first } = await firstLeaderObserved(context);
      const second = b.campaign('second', { waitMs: context.scaled(30_000) });
      // Awaited below; until then a rejection (the check failing first) must not go unhandled.
      second.catch(() => {});
      await delay(context.scaled(100));
      assert.equal(first.isLeader, true, 'the first leader lost leadership before its session did');
      // A session is kept alive within its TTL, so its loss must be noticed within one TTL (keep-alive
      // refused, or the TTL running out unrenewed) and the server frees the seat at the same moment;
      // the slack is for the round trips and a busy machine.
      const boundMs = context.scaled(context.ttlMs + 2_000);
      await loseSession(a, first);
      await waitForAbort(first.signal, boundMs, 'the leadership signal after its session was lost');
      assert.equal(first.isLeader, false, 'isLeader still true after the leadership signal aborted');
      const reason = first.signal.reason as { code?: unknown } | undefined;
      assert.equal(reason?.code, 'lost', 'the leadership signal reason should be a LockLostError');
      const next = await within(second, boundMs, 'the next candidate after the leader lost its session');
      assert.equal(next.candidate, 'second');
      assert.ok(next.term > first.term, `term ${next.term} not above ${first.term}`);
      await observer.until((l) => l?.candidate === 'second', boundMs, 'the leader after the session loss');
      const { second: secondSeen } = await observedInOrder(observer, context);
      assert.equal(secondSeen?.term, next.term);
      assert.equal((await watcher.leader())?.candidate, 'second');
      await next.resign();
    },
  },
  ...electionNameChecks,
];
