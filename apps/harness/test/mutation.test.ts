import { afterEach, describe, expect, it } from 'vitest';
import { installRequestedMutant } from '../src/mutation/client-hook.js';
import { missingFaults, settingOf } from '../src/mutation/measure.js';
import {
  loadMutants,
  MUTANT_ENV,
  type MutantSpec,
  MutantsUnavailableError,
} from '../src/mutation/mutants-module.js';
import { mutantForRun, selectMutants } from '../src/mutation/select.js';
import { attributable, type BaselineRow, type MutantRow, mutationTable } from '../src/mutation/table.js';
import { OptionsError } from '../src/run/options.js';

const spec = (name: string, backend: string, faults: string[] = []): MutantSpec => ({
  name,
  backend,
  breaks: 'a promise',
  exposure: { workload: 'mutex', faults, fencing: true },
  checkers: ['lease'],
  install: async () => ({}),
});
const all = [spec('redis-a', 'redis'), spec('redis-b', 'redis'), spec('zk-a', 'zk', ['no-such-fault'])];

afterEach(() => {
  delete process.env[MUTANT_ENV];
});

describe('loading the mutants package', () => {
  it('finds @fencekit/mutants in the checkout, with its registry', async () => {
    const mutants = await loadMutants();
    expect(mutants.MUTANTS.length).toBeGreaterThanOrEqual(10);
    expect(mutants.findMutant('redis-release-any-holder').backend).toBe('redis');
  });

  it('says what is missing and how to build it when the package cannot be loaded', async () => {
    const loading = loadMutants('@fencekit/no-such-package');
    await expect(loading).rejects.toBeInstanceOf(MutantsUnavailableError);
    await expect(loading).rejects.toThrow(
      /needs the private package @fencekit\/mutants .* npx tsc -b packages\/mutants/,
    );
  });
});

describe('selecting mutants', () => {
  it('takes all of them, some by name, or those of some backends', () => {
    expect(selectMutants(all, {}).map((m) => m.name)).toEqual(['redis-a', 'redis-b', 'zk-a']);
    expect(selectMutants(all, { only: 'zk-a, redis-b' }).map((m) => m.name)).toEqual(['redis-b', 'zk-a']);
    expect(selectMutants(all, { backends: 'zk' }).map((m) => m.name)).toEqual(['zk-a']);
  });

  it('refuses an unknown name or backend, naming the known ones, and an empty selection', () => {
    expect(() => selectMutants(all, { only: 'redis-x' })).toThrow(
      /unknown mutant redis-x; known mutants: redis-a/,
    );
    expect(() => selectMutants(all, { backends: 'etcd' })).toThrow(OptionsError);
    expect(() => selectMutants(all, { only: 'redis-a', backends: 'zk' })).toThrow(/leaves no mutant/);
  });

  it('refuses a run whose backend is not the mutant’s', () => {
    expect(mutantForRun(all, 'zk-a', 'zk').name).toBe('zk-a');
    expect(() => mutantForRun(all, 'zk-a', 'redis')).toThrow(/--backend zk/);
  });

  it('knows which named faults this harness lacks', () => {
    expect(missingFaults(all[0]!)).toEqual([]);
    expect(missingFaults(all[2]!)).toEqual(['no-such-fault']);
    expect(settingOf(all[2]!)).toBe('mutex · no-such-fault · fencing on');
    const tuned = { ...all[0]!, exposure: { ...all[0]!.exposure, clients: 10, ttlMs: 50 } };
    expect(settingOf(tuned)).toBe('mutex · no fault · fencing on · 10 clients · TTL 50 ms');
  });
});

describe('the client process hook', () => {
  it('installs nothing when no mutant is asked for', async () => {
    expect(await installRequestedMutant('redis')).toBeUndefined();
  });

  it('refuses a mutant of another backend, and an unknown one', async () => {
    process.env[MUTANT_ENV] = 'zk-watch-all-children';
    await expect(installRequestedMutant('redis')).rejects.toThrow(/breaks the zk adapter, not redis/);
    process.env[MUTANT_ENV] = 'redis-nope';
    await expect(installRequestedMutant('redis')).rejects.toThrow(/unknown mutant "redis-nope"/);
  });
});

describe('the mutation table', () => {
  const setting = 'mutex · pause-client · fencing on';
  const row = (mutant: string, convictedBy: string[], extra: Partial<MutantRow> = {}): MutantRow => ({
    mutant,
    backend: 'redis',
    setting,
    expected: ['lease'],
    convictedBy,
    seedsTried: 2,
    harnessMs: 12_340,
    ...extra,
  });
  const clean: BaselineRow = {
    backend: 'redis',
    setting,
    seedsTried: 5,
    convictions: 0,
    convictedBy: [],
    harnessMs: 50_000,
  };

  it('lists convictions with their checker and time, survivors with the time spent, and the baselines', () => {
    const table = mutationTable(
      [
        row('redis-a', ['lease']),
        row('redis-b', [], { seedsTried: 0, harnessMs: 0, note: 'fault x not in this harness' }),
      ],
      [clean],
    );
    expect(table).toContain('| redis-a | redis | lease | lease | 2 | 12.3 s |');
    expect(table).toContain(
      '| redis-b | redis | lease | **not convicted** (fault x not in this harness) | 0 | — (0.0 s spent) |',
    );
    expect(table).toContain('| redis | mutex · pause-client · fencing on | 5 | 0 | — | 50.0 s |');
  });

  it('does not credit a mutant with a checker that also convicted the unmutated adapter', () => {
    const dirty: BaselineRow = { ...clean, convictions: 1, convictedBy: ['liveness'] };
    expect(attributable(row('redis-a', ['liveness', 'lease']), [dirty])).toEqual(['lease']);
    expect(attributable(row('redis-a', ['liveness']), [dirty])).toEqual([]);
    const table = mutationTable([row('redis-a', ['liveness'])], [dirty]);
    expect(table).toContain('| **not proven**: liveness (also unmutated) |');
  });
});
