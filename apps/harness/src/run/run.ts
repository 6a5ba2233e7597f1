import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadBackend } from '../backends/index.js';
import type { Deployment, Provider } from '../backends/types.js';
import { documentedBounds } from '../client/bounds.js';
import { nowNs } from '../history/clock.js';
import { HistoryCollector } from '../history/collector.js';
import type { UnindexedEvent } from '../history/event.js';
import { CLOSING_FAULT } from '../nemesis/faults.js';
import { hangAtClose } from '../nemesis/hang-at-close.js';
import {
  type ClientHandle,
  type FaultWindowSummary,
  healAll,
  type NemesisContext,
  runSchedule,
} from '../nemesis/nemesis.js';
import { seededRandom } from '../nemesis/random.js';
import { runScenario } from '../nemesis/scenarios.js';
import { faultSchedule } from '../nemesis/schedule.js';
import type { ClientConfig } from '../workloads/types.js';
import { sleep } from '../workloads/util.js';
import { exited, forkReady } from './child.js';
import { validateRun } from './compatibility.js';
import { EventWatch } from './event-watch.js';
import { GrantTracker } from './grants.js';
import type { ParsedRunOptions } from './options.js';
import { type RunMeta, writeRun } from './output.js';
import { consoleProgress, linesTo, type ProgressSink } from './progress.js';
import { resolveProvider } from './provider.js';
import { scenarioSettings } from './scenario-settings.js';

export interface RunHooks {
  /** A deployment to reuse (the suite shares one per backend); otherwise one is started and closed. */
  deployment?: Deployment;
  /** Ctrl-C: heal, stop clients, tear down, and keep what was recorded (judged at best `unknown`). */
  signal?: AbortSignal;
  /** Log lines only (tests): the status comes as a plain line every 2 s. */
  progress?: (line: string) => void;
  /** Lines and live status (the CLI: a bar on a terminal); default: stderr. */
  sink?: ProgressSink;
  /** This run's place in a suite, shown with its status. */
  position?: { index: number; total: number };
}

export interface RunSummary {
  id: string;
  dir: string;
  verdict: 'ok' | 'illegal' | 'unknown';
  meta: RunMeta;
}

/**
 * One run: servers (or a shared deployment), the resource process, N client processes, the nemesis
 * on its schedule, then a final heal and recovery phase; then the history is written, checked and
 * reported under `<out>/<run-id>/`.
 */
export async function runOnce(options: ParsedRunOptions, hooks: RunHooks = {}): Promise<RunSummary> {
  const factory = await loadBackend(options.backend);
  const scripted = scenarioSettings(options.scenario);
  const ttlMs = options.ttl ?? scripted.ttlMs ?? factory.defaultTtlMs;
  const sessionMs = factory.sessionMs?.(ttlMs) ?? ttlMs;
  validateRun(options, factory);
  // Fencing means the resource checks fences: only where the workload writes under a lock with fences.
  const fencing =
    options.fencing && factory.safeFences && options.workload !== 'cron' && options.workload !== 'cas';
  // The embedded backend runs no servers, so it has no provider to choose.
  const provider: Provider =
    hooks.deployment?.provider ??
    (factory.name === 'memory' ? 'local' : await resolveProvider(options.provider));
  const sink = hooks.sink ?? (hooks.progress ? linesTo(hooks.progress) : consoleProgress());
  const id = runId(options);
  const dir = resolve(options.out, id);
  mkdirSync(dir, { recursive: true });
  const say = (line: string) => sink.line(`[${id}] ${line}`);
  let phase = 'deploy';
  const enter = (name: string, detail: string) => {
    phase = name;
    say(`phase=${name} ${detail}`);
  };
  const abort = new AbortController();
  const onAbort = () => abort.abort(hooks.signal?.reason);
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  const collector = new HistoryCollector();
  const work = mkdtempSync(join(tmpdir(), 'fencekit-run-'));
  const children: ChildProcess[] = [];
  let deployment = hooks.deployment;
  const startedIso = new Date().toISOString();
  let faultsApplied: FaultWindowSummary[] = [];
  let elapsedMs = 0;
  let startedAtNs: number | undefined;
  try {
    if (!deployment) {
      await factory.preflight(provider);
      enter('deploy', `backend=${options.backend} provider=${provider}`);
      deployment = await factory.deploy({ provider, signal: abort.signal });
    }
    enter('setup', 'starting resource and clients');
    const resource = await forkReady(
      'resource/main.js',
      [],
      {
        kind: 'start',
        socketPath: join(work, 'resource.sock'),
        dbPath: join(work, 'resource.db'),
        stock: options.stock,
        fencing,
      },
      15_000,
      (message) => receive(collector, 'resource', message),
    );
    children.push(resource);
    const namespace = `fencekit-${id}`;
    // Each waiter says whether it took the client; a client nobody takes goes on to the next waiter.
    const windowWaiters: ((client: ClientHandle) => boolean)[] = [];
    // Faults aimed at the lease act on what clients do (a release invoked, another client granted).
    const events = new EventWatch();
    // A scenario that needs a client stopped inside its window for sure has the client wait for this
    // side's acknowledgement, sent only once the nemesis has had its say (a SIGSTOP comes before it).
    const { windowAck } = scripted;
    const handles: ClientHandle[] = [];
    const clients = await Promise.all(
      Array.from({ length: options.clients }, async (_, index) => {
        const config: ClientConfig = {
          index,
          clients: options.clients,
          backend: options.backend,
          endpoints: [...deployment!.endpoints],
          namespace,
          resourceSocket: join(work, 'resource.sock'),
          workload: options.workload,
          fencing,
          ttlMs,
          windowMs: options.window,
          opTimeoutMs: Math.max(2_000, ttlMs * 4),
          acquire: scripted.acquire,
          windowAck,
          tickMs: options.tick,
          seed: options.seed,
        };
        const source = `client ${index}`;
        collector.source(source);
        let current = index;
        const grants = new GrantTracker();
        let child: ChildProcess | undefined;
        child = await forkReady('client/main.js', [], { kind: 'start', config }, 60_000, (message) => {
          if (message.kind === 'window') {
            current = message.process as number;
            const handle = handles[index]!;
            for (const waiter of [...windowWaiters]) if (waiter(handle)) break;
            if (windowAck && child?.connected) child.send({ kind: 'continue', seq: message.seq });
          } else {
            if (message.kind === 'events') grants.see(message.events as UnindexedEvent[]);
            receive(collector, source, message);
            if (message.kind === 'events' && handles[index]) {
              events.see(handles[index], message.events as UnindexedEvent[]);
            }
          }
        });
        children.push(child);
        handles[index] = {
          index,
          get process() {
            return current;
          },
          get grant() {
            return grants.last;
          },
          pause: () => child?.kill('SIGSTOP'),
          resume: () => child?.kill('SIGCONT'),
        };
        return child;
      }),
    );
    const startedAt = performance.now();
    startedAtNs = nowNs();
    for (const client of clients) client.send({ kind: 'go' });
    const { faults: schedule, recoveryAtMs } = faultSchedule({
      seed: options.seed,
      faults: options.fault,
      durationMs: options.time,
      ttlMs,
      sessionMs,
    });
    const faultPhase = new AbortController();
    const stopFaults = () => faultPhase.abort();
    abort.signal.addEventListener('abort', stopFaults, { once: true });
    const context: NemesisContext = {
      deployment,
      ttlMs,
      sessionMs,
      nextEvent: (accept, timeoutMs, signal) => events.next(accept, timeoutMs, signal),
      seed: options.seed,
      signal: faultPhase.signal,
      startedAt,
      record: (event: UnindexedEvent) => collector.addLocal(event),
      progress: say,
      applied: 0,
      nextWindow: (timeoutMs, signal, wait = {}) =>
        new Promise((resolveWindow) => {
          const done = (client: ClientHandle | undefined) => {
            clearTimeout(timer);
            signal.removeEventListener('abort', cancel);
            const at = windowWaiters.indexOf(waiter);
            if (at >= 0) windowWaiters.splice(at, 1);
            resolveWindow(client);
          };
          const waiter = (client: ClientHandle) => {
            if (wait.accept && !wait.accept(client)) return false;
            if (wait.pause) client.pause();
            done(client);
            return true;
          };
          const cancel = () => done(undefined);
          const timer = setTimeout(cancel, timeoutMs);
          signal.addEventListener('abort', cancel, { once: true });
          windowWaiters.push(waiter);
        }),
    };
    enter('run', `clients=${options.clients} time=${options.time}ms ttl=${ttlMs}ms`);
    say(`processes: resource pid=${resource.pid} clients ${clients.map((c) => `pid=${c.pid}`).join(' ')}`);
    const ticker = startTicker(collector, startedAt, (status) =>
      sink.status({
        run: id,
        phase,
        durationMs: options.time,
        faults: context.applied,
        ...status,
        ...(hooks.position ? { position: hooks.position } : {}),
      }),
    );
    const recoveryTimer = setTimeout(stopFaults, recoveryAtMs);
    try {
      faultsApplied = options.scenario
        ? await runScenario(options.scenario, context, recoveryAtMs)
        : await runSchedule(context, schedule);
      await sleep(startedAt + recoveryAtMs - performance.now(), abort.signal);
      let endAt = startedAt + options.time;
      if (options.fault.length > 0 || options.scenario) {
        enter('recovery', 'final heal');
        await healAll({ ...context, signal: new AbortController().signal });
        // A slow heal (a ZooKeeper restart) must not eat the recovery phase: keep at least two TTLs of it.
        endAt = Math.max(endAt, performance.now() + 2 * ttlMs);
      }
      await sleep(endAt - performance.now(), abort.signal);
    } finally {
      clearTimeout(recoveryTimer);
      clearInterval(ticker);
      sink.end();
      abort.signal.removeEventListener('abort', stopFaults);
    }
    elapsedMs = performance.now() - startedAt;
    if (abort.signal.aborted) collector.problem('run interrupted before its end');
    enter('teardown', 'stopping clients');
    const hang = options.fault.includes(CLOSING_FAULT)
      ? await hangAtClose(
          { ...context, signal: abort.signal },
          seededRandom(options.seed ^ 0xc105e),
          documentedBounds(options.backend, ttlMs).closeMs,
        )
      : undefined;
    for (const child of clients) {
      child.kill('SIGCONT');
      if (child.connected) child.send({ kind: 'stop' });
    }
    const stopMs = Math.max(5_000, ttlMs * 6) + (hang && 'holdMs' in hang ? hang.holdMs : 0);
    const exits = clients.map((child) => exited(child, stopMs));
    if (hang) faultsApplied.push('healAfter' in hang ? await hang.healAfter(exits) : hang);
    const stopped = await Promise.all(exits);
    stopped.forEach((ok, index) => {
      if (!ok) collector.problem(`client ${index} did not stop within ${stopMs} ms and was killed`);
    });
    if (resource.connected) resource.send({ kind: 'stop' });
    if (!(await exited(resource, 5_000))) collector.problem('the resource did not stop and was killed');
  } catch (error) {
    collector.problem(`run failed: ${(error as Error).message}`);
    throw error;
  } finally {
    hooks.signal?.removeEventListener('abort', onAbort);
    for (const child of children) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    if (deployment) await deployment.faults.heal().catch(() => undefined);
    if (deployment && !hooks.deployment) await deployment.close().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
  const meta: RunMeta = {
    id,
    startedAt: startedIso,
    backend: options.backend,
    workload: options.workload,
    faults: options.fault,
    scenario: options.scenario ?? null,
    fencing,
    safeFences: factory.safeFences,
    provider,
    clients: options.clients,
    seed: options.seed,
    durationMs: options.time,
    ...(startedAtNs === undefined ? {} : { startedAtNs }),
    elapsedMs: Math.round(elapsedMs),
    ttlMs,
    windowMs: options.window,
    stock: options.stock,
    tickMs: options.tick,
    nodes: deployment?.nodes ?? [],
    faultsApplied,
    problems: collector.completeness(),
  };
  const verdict = await writeRun(dir, meta, collector.history());
  say(`verdict=${verdict} report=${join(dir, 'index.html')}`);
  return { id, dir, verdict, meta };
}

function receive(collector: HistoryCollector, source: string, message: Record<string, unknown>): void {
  if (message.kind === 'events') collector.add(source, message.events as UnindexedEvent[]);
  else if (message.kind === 'done') {
    collector.announce(source, message.count as number, message.failure as string | undefined);
  }
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

function runId(options: ParsedRunOptions): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const faults = options.scenario ? `scenario-${options.scenario}` : options.fault.join('+') || 'none';
  const fencing =
    options.fencing && options.workload !== 'cron' && options.workload !== 'cas' ? 'fenced' : 'unfenced';
  const unique = Math.floor(Math.random() * 0xffff)
    .toString(16)
    .padStart(4, '0');
  return `${stamp}-${options.backend}-${options.workload}-${faults}-${fencing}-s${options.seed}-${unique}`;
}
