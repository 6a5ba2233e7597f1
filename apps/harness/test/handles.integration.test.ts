import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { leftOpen, openResources } from '../src/run/leftovers.js';
import { reportsDir, run } from './support/runs.js';

/**
 * A run must close everything it opened: timers, sockets, servers and child processes. Anything left
 * would keep the CLI alive after its command (as a proxied socket left half-closed once did).
 */
const out = reportsDir();
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Processes whose parent is this one (the servers, clients and resource a run starts). */
function children(): number[] {
  const mine: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces, so split after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) mine.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return mine;
}

async function leavesNothing(input: Parameters<typeof run>[0]): Promise<void> {
  const before = openResources();
  const childrenBefore = children();
  const { results } = await run(input);
  expect(['ok', 'illegal', 'unknown']).toContain(results.verdict);
  // A child that just exited closes its handles on the next turns of the loop.
  await sleep(200);
  expect(leftOpen(before)).toEqual([]);
  expect(children().filter((pid) => !childrenBefore.includes(pid))).toEqual([]);
}

describe('a run leaves no handle behind', () => {
  it('memory backend, client pauses and a lock-server kill', () =>
    leavesNothing({
      backend: 'memory',
      workload: 'inventory',
      fault: 'pause-client,kill',
      clients: 3,
      time: '6s',
      out,
    }));

  it('Redis on local servers behind the fault proxy, cut and killed', () =>
    leavesNothing({
      backend: 'redis',
      workload: 'inventory',
      fault: 'cut-clients,kill',
      clients: 3,
      time: '7s',
      out,
    }));

  // The run that once kept the CLI alive: ZooKeeper answers clock faults with FIN and RST in one tick, and
  // the cluster's proxy used to reset sockets it had already ended, which Node never closes.
  it(
    'ZooKeeper on local servers behind the fault proxy, clock jumps and drift',
    () =>
      leavesNothing({
        backend: 'zk',
        workload: 'inventory',
        fault: 'clock-jump,clock-drift',
        clients: 3,
        time: '11s',
        out,
      }),
    120_000,
  );
});
