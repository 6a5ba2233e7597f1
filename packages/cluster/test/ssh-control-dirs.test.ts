import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepStaleControlDirs, writeControlOwner } from '../src/ssh/control-dirs.js';

const dir = mkdtempSync(join(tmpdir(), 'fk-ctl-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The ssh provider's local control dirs: a later start ends the masters of a dead owner and removes its dir. */
describe('ssh control dirs', () => {
  it("ends the masters of dead owners' dirs and removes them; live owners' and unowned dirs stay", () => {
    const base = mkdtempSync(join(dir, 'base-'));
    // A fake ssh that records what it is asked: no master here, only the call matters.
    const bin = mkdtempSync(join(dir, 'bin-'));
    const calls = join(bin, 'calls');
    writeFileSync(join(bin, 'ssh'), `#!/bin/sh\necho "$*" >> '${calls}'\n`);
    chmodSync(join(bin, 'ssh'), 0o755);
    const dead = spawnSync('true').pid;
    const stale = join(base, 'fk-ssh-dead');
    mkdirSync(stale);
    writeFileSync(join(stale, 'owner'), `${dead}\n`);
    writeFileSync(join(stale, 'abc123'), '');
    const live = join(base, 'fk-ssh-live');
    mkdirSync(live);
    writeControlOwner(live);
    const unowned = join(base, 'fk-ssh-unowned');
    mkdirSync(unowned);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      expect(sweepStaleControlDirs(base)).toEqual([stale]);
    } finally {
      process.env.PATH = path;
    }
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live) && existsSync(unowned)).toBe(true);
    expect(readFileSync(calls, 'utf8')).toBe(
      `-o ControlPath=${join(stale, 'abc123')} -O exit fencekit-stale-master\n`,
    );
  });
});
