import assert from 'node:assert/strict';
import { assertRejectsWithCode, within } from './context.js';
import type { ElectionCheck } from './election-checks.js';
import { HOSTILE_NAME_SUFFIXES, WELL_FORMED_NAME_SUFFIX } from './names.js';

export const electionNameChecks: readonly ElectionCheck[] = [
  {
    id: 'hostile-election-names',
    title:
      'election and candidate names with a lone surrogate, DEL or C0/C1 controls give InvalidArgumentError',
    async run(context) {
      const participant = await context.participant();
      for (const [what, suffix] of HOSTILE_NAME_SUFFIXES) {
        await assertRejectsWithCode(
          () => context.participantIn(`${context.name}-${suffix}`),
          'invalid-argument',
          `an election named with ${what}`,
        );
        await assertRejectsWithCode(
          () => participant.campaign(`candidate-${suffix}`, { waitMs: context.scaled(1_000) }),
          'invalid-argument',
          `campaign: a candidate named with ${what}`,
        );
      }
      // Refusing the hostile names must not refuse well-formed non-ASCII ones; what leader() and
      // observe() give back is exactly the name the candidate campaigned with.
      const astral = await context.participantIn(`${context.name}-${WELL_FORMED_NAME_SUFFIX}`);
      const leadership = await astral.campaign(WELL_FORMED_NAME_SUFFIX, { waitMs: context.scaled(5_000) });
      assert.equal((await astral.leader())?.candidate, WELL_FORMED_NAME_SUFFIX);
      const controller = new AbortController();
      const observed = (async () => {
        for await (const leader of astral.observe({ signal: controller.signal })) {
          controller.abort();
          return leader?.candidate;
        }
      })();
      const candidate = await within(observed, context.scaled(5_000), 'observe() of the astral election');
      assert.equal(candidate, WELL_FORMED_NAME_SUFFIX);
      await leadership.resign();
    },
  },
];
