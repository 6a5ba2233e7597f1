import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { redlockBackend } from '../src/backends/redlock.js';
import { zkBackend } from '../src/backends/zk.js';
import { OptionsError, parseRunOptions } from '../src/index.js';
import { validateRun } from '../src/run/compatibility.js';

/** The CLI turns an OptionsError into exit code 64 before anything is started. */
function refusal(backend: 'redlock' | 'zk', fault: string): unknown {
  const factory = { redlock: redlockBackend, zk: zkBackend }[backend];
  const options = parseRunOptions({ backend, workload: 'mutex', fault, fencing: backend !== 'redlock' });
  try {
    validateRun(options, factory);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('faults a backend topology cannot apply are refused at validation', () => {
  it("Redlock's five independent masters have no peer links to partition or isolate", () => {
    for (const fault of ['partition', 'isolate']) {
      const error = refusal('redlock', fault);
      expect(error).toBeInstanceOf(OptionsError);
      expect(String((error as Error).message)).toMatch(
        new RegExp(`fault ${fault} cannot take effect on redlock: .*never talk to each other`),
      );
    }
  });

  it('faults that take effect on the topology pass', () => {
    expect(refusal('redlock', 'kill,pause-server,clock-jump,latency,cut-clients')).toBeUndefined();
    expect(refusal('zk', 'partition,isolate,clock-drift')).toBeUndefined();
  });
});

describe('the CLI', () => {
  it('exits 64 before starting anything for a partition of Redlock, naming why', async () => {
    const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
    const result = spawnSync(process.execPath, [cli, 'run', '--backend', 'redlock', '--fault', 'isolate'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(64);
    expect(result.stderr).toMatch(/fault isolate cannot take effect on redlock: .*never talk to each other/);
  });
});
