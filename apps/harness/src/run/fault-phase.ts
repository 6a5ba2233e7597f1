import { recoveryPhaseMs } from '../check/checkers.js';
import { nowNs } from '../history/clock.js';
import type { HistoryCollector } from '../history/collector.js';
import type { UnindexedEvent } from '../history/event.js';
import { healAll, type NemesisContext, runSchedule } from '../nemesis/nemesis.js';
import { runScenario } from '../nemesis/scenarios.js';
import { faultSchedule } from '../nemesis/schedule.js';
import { sleep } from '../workloads/util.js';
import type { RunProcesses } from './processes.js';
import { enter, type Run, say } from './record.js';

/**
 * The run proper: the clients go, the nemesis follows its schedule (or its scenario) until the recovery
 * phase, where everything is healed and the clients run on for the rest of the time (at least two
 * TTLs). Returns the nemesis's context, for the fault the teardown applies.
 */
export async function runClientsUnderFaults(run: Run, processes: RunProcesses): Promise<NemesisContext> {
  const { options, abort, collector, ttlMs } = run;
  const startedAt = performance.now();
  run.startedAt = startedAt;
  run.startedAtNs = nowNs();
  for (const client of processes.clients) client.send({ kind: 'go' });
  // Long enough after the final heal for a stuck lock to be convicted (settle + bound + margin).
  const recoveryMs = recoveryPhaseMs(options.backend, ttlMs, options.workload);
  const { faults: schedule, recoveryAtMs } = faultSchedule({
    seed: options.seed,
    faults: options.fault,
    durationMs: options.time,
    ttlMs,
    sessionMs: run.sessionMs,
    recoveryMs,
  });
  const faultPhase = new AbortController();
  const stopFaults = () => faultPhase.abort();
  abort.signal.addEventListener('abort', stopFaults, { once: true });
  const context: NemesisContext = {
    deployment: run.deployment!,
    ttlMs,
    sessionMs: run.sessionMs,
    seed: options.seed,
    namespace: `fencekit-${run.id}`,
    signal: faultPhase.signal,
    startedAt,
    record: (event: UnindexedEvent) => collector.addLocal(event),
    progress: (line) => say(run, line),
    applied: 0,
    clients: processes.handles,
    nextWindow: (timeoutMs, signal, wait) => processes.windows.next(timeoutMs, signal, wait),
    nextEvent: (accept, timeoutMs, signal) => processes.events.next(accept, timeoutMs, signal),
  };
  enter(run, 'run', `clients=${options.clients} time=${options.time}ms ttl=${ttlMs}ms`);
  say(
    run,
    `processes: resource pid=${processes.resource.pid} clients ${processes.clients.map((c) => `pid=${c.pid}`).join(' ')}`,
  );
  const ticker = startTicker(collector, startedAt, (status) =>
    run.sink.status({
      run: run.id,
      phase: run.phase,
      durationMs: options.time,
      faults: context.applied,
      ...status,
      ...(run.hooks.position ? { position: run.hooks.position } : {}),
    }),
  );
  const recoveryTimer = setTimeout(stopFaults, recoveryAtMs);
  try {
    run.faultsApplied = options.scenario
      ? await runScenario(options.scenario, context, recoveryAtMs)
      : await runSchedule(context, schedule);
    await sleep(startedAt + recoveryAtMs - performance.now(), abort.signal);
    let endAt = startedAt + options.time;
    if (options.fault.length > 0 || options.scenario) {
      enter(run, 'recovery', 'final heal');
      await healAll({ ...context, signal: new AbortController().signal });
      // A slow heal (a ZooKeeper restart) must not eat the recovery phase: keep all of it.
      endAt = Math.max(endAt, performance.now() + recoveryMs);
    }
    await sleep(endAt - performance.now(), abort.signal);
  } finally {
    clearTimeout(recoveryTimer);
    clearInterval(ticker);
    run.sink.end();
    abort.signal.removeEventListener('abort', stopFaults);
  }
  run.elapsedMs = performance.now() - startedAt;
  if (abort.signal.aborted) collector.problem('run interrupted before its end');
  return context;
}

/** Reports elapsed time, ops/s (over the last 2 s) and the event count twice a second. */
function startTicker(
  collector: HistoryCollector,
  startedAt: number,
  report: (status: { elapsedMs: number; opsPerSecond: number; events: number }) => void,
): NodeJS.Timeout {
  const timer = setInterval(() => {
    const elapsedMs = performance.now() - startedAt;
    const windowMs = Math.max(1, Math.min(2_000, elapsedMs));
    const since = Number(process.hrtime.bigint()) - windowMs * 1e6;
    const opsPerSecond = Math.round((collector.completionsSince(since) * 1_000) / windowMs);
    report({ elapsedMs, opsPerSecond, events: collector.size });
  }, 500);
  timer.unref();
  return timer;
}
