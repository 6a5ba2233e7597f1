import { describe, expect, it } from 'vitest';
import { findMutant, MUTANTS, MutantTargetError, patchMethod, UnknownMutantError } from '../src/index.js';

describe('the mutant registry', () => {
  it('holds at least ten mutants, each with a unique name and everything the table needs', () => {
    expect(MUTANTS.length).toBeGreaterThanOrEqual(10);
    expect(new Set(MUTANTS.map((m) => m.name)).size).toBe(MUTANTS.length);
    for (const m of MUTANTS) {
      expect(m.name).toMatch(/^(redis|redlock|zk|etcd)-[a-z0-9-]+$/);
      expect(m.name.startsWith(`${m.backend}-`), m.name).toBe(true);
      expect(m.breaks.length, m.name).toBeGreaterThan(20);
      expect(m.checkers.length, m.name).toBeGreaterThan(0);
      expect(['inventory', 'mutex', 'election', 'cron', 'semaphore', 'rwlock']).toContain(
        m.exposure.workload,
      );
    }
  });

  it('re-creates the five bugs of issue #13', () => {
    const bugs = MUTANTS.flatMap((m) => (m.bug ? [/^#13 bug \d/.exec(m.bug)?.[0]] : []));
    expect(bugs.sort()).toEqual(['#13 bug 1', '#13 bug 2', '#13 bug 3', '#13 bug 4', '#13 bug 5']);
  });

  it('finds a mutant by name, and names the known ones for an unknown name', () => {
    expect(findMutant('redis-release-any-holder').backend).toBe('redis');
    const error = (() => {
      try {
        findMutant('redis-nope');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(UnknownMutantError);
    expect((error as Error).message).toContain('zk-watch-all-children');
  });
});

describe('patchMethod', () => {
  it('replaces a method and returns the original', () => {
    class Target {
      value() {
        return 1;
      }
    }
    const original = patchMethod(
      Target.prototype,
      'value',
      (orig) =>
        function (this: Target) {
          return orig.call(this) + 1;
        },
      'test-mutant',
    );
    expect(new Target().value()).toBe(2);
    expect(original.call(new Target())).toBe(1);
  });

  it('fails loudly when the target is gone, so a mutant never runs as the unmutated adapter', () => {
    const proto = { other() {} } as unknown as { missing: () => void };
    expect(() => patchMethod(proto, 'missing', (o) => o, 'test-mutant')).toThrow(MutantTargetError);
  });
});
