import { documentedBounds } from '../client/bounds.js';
import { CLOSING_FAULT } from '../nemesis/faults.js';
import { hangAtClose } from '../nemesis/hang-at-close.js';
import type { NemesisContext } from '../nemesis/nemesis.js';
import { seededRandom } from '../nemesis/random.js';
import { askToStop, exited } from './child.js';
import type { RunProcesses } from './processes.js';
import { enter, type Run } from './record.js';

/**
 * Teardown: the clients are told to stop (each finishes its op, closes its backend client and reports
 * its event count), then the resource. A process that does not exit in time is killed and the history
 * marked incomplete. With `hang-at-close`, a server hangs while the clients close (see hang-at-close.ts).
 */
export async function stopProcesses(
  run: Run,
  processes: RunProcesses,
  context: NemesisContext,
): Promise<void> {
  const { options, collector, ttlMs } = run;
  enter(run, 'teardown', 'stopping clients');
  const hang = options.fault.includes(CLOSING_FAULT)
    ? await hangAtClose(
        // The fault phase has ended: only Ctrl-C cuts this one short.
        { ...context, signal: run.abort.signal },
        seededRandom(options.seed ^ 0xc105e),
        documentedBounds(options.backend, ttlMs, run.sessionMs).closeMs,
      )
    : undefined;
  for (const child of processes.clients) {
    child.kill('SIGCONT');
    askToStop(child);
  }
  const stopMs = Math.max(5_000, ttlMs * 6) + (hang && 'holdMs' in hang ? hang.holdMs : 0);
  const exits = processes.clients.map((child) => exited(child, stopMs));
  if (hang) run.faultsApplied.push('healAfter' in hang ? await hang.healAfter(exits) : hang);
  const stopped = await Promise.all(exits);
  stopped.forEach((ok, index) => {
    if (!ok) collector.problem(`client ${index} did not stop within ${stopMs} ms and was killed`);
  });
  const { resource } = processes;
  askToStop(resource);
  if (!(await exited(resource, 5_000))) collector.problem('the resource did not stop and was killed');
}
