import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SshSession } from '../src/ssh/session.js';

const dir = mkdtempSync(join(tmpdir(), 'fk-sync-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A fake ssh: a master that sleeps until `-O exit`, and commands that each mark their start and succeed only if
 * all three nodes' commands are running at the same time (waiting at most 2 s for the others).
 */
function fakeSsh(): string {
  const bin = mkdtempSync(join(dir, 'bin-'));
  const state = mkdtempSync(join(dir, 'state-'));
  writeFileSync(
    join(bin, 'ssh'),
    `#!/bin/sh
case " $* " in
  *" -M "*) echo $$ >> '${state}/masters'; exec sleep 600;;
  *" -O check "*) exit 0;;
  *" -O exit "*) kill $(cat '${state}/masters') 2> /dev/null; exit 0;;
esac
touch '${state}/started.'$$
n() { ls '${state}' | grep -c started; }
i=0; while [ "$(n)" -lt 3 ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
[ "$(n)" -ge 3 ]
`,
  );
  chmodSync(join(bin, 'ssh'), 0o755);
  return bin;
}

describe('the clean-up at exit', () => {
  it('runs on every node at once, so its total bound is one per-node bound, not one per node', async () => {
    const bin = fakeSsh();
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    const control = mkdtempSync('/tmp/fk-sync-');
    const sessions: SshSession[] = [];
    try {
      for (const port of [2201, 2202, 2203])
        sessions.push(await SshSession.open({ host: '127.0.0.1', port }, { controlDir: control }));
      // The old clean-up, one node after the other: the first nodes never see the others running.
      expect(sessions.map((s) => s.runSync('true', 5_000))).not.toEqual([0, 0, 0]);
    } finally {
      process.env.PATH = path;
    }
    process.env.PATH = `${fakeSsh()}:${path}`;
    try {
      expect(SshSession.runSyncAll(sessions, () => 'true', 5_000)).toEqual([0, 0, 0]);
    } finally {
      process.env.PATH = path;
      await Promise.all(sessions.map((s) => s.close()));
      rmSync(control, { recursive: true, force: true });
    }
  }, 30_000);
});
