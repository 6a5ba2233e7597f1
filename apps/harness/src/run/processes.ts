import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { HistoryCollector } from '../history/collector.js';
import type { UnindexedEvent } from '../history/event.js';
import type { ClientHandle } from '../nemesis/nemesis.js';
import type { ClientConfig } from '../workloads/types.js';
import { forkReady } from './child.js';
import { EventWatch } from './event-watch.js';
import { GrantTracker } from './grants.js';
import type { Run } from './record.js';
import { WindowWatch } from './window-watch.js';

/** The processes of a run and what the nemesis watches them through. */
export interface RunProcesses {
  readonly resource: ChildProcess;
  readonly clients: ChildProcess[];
  readonly handles: ClientHandle[];
  /** Clients opening their window (between check and write). */
  readonly windows: WindowWatch;
  /** Clients' events as they arrive, for faults that act on what clients do. */
  readonly events: EventWatch;
}

/** Setup: the resource process, then the client processes, each ready and connected (not yet going). */
export async function startProcesses(run: Run): Promise<RunProcesses> {
  const { options, collector, work } = run;
  const resource = await forkReady(
    'resource/main.js',
    [],
    {
      kind: 'start',
      socketPath: join(work, 'resource.sock'),
      dbPath: join(work, 'resource.db'),
      stock: options.stock,
      fencing: run.fencing,
    },
    15_000,
    (message) => receive(collector, 'resource', message),
  );
  run.children.push(resource);
  const windows = new WindowWatch();
  const events = new EventWatch();
  const handles: ClientHandle[] = [];
  const clients = await Promise.all(
    Array.from({ length: options.clients }, (_, index) => startClient(run, index, handles, windows, events)),
  );
  return { resource, clients, handles, windows, events };
}

async function startClient(
  run: Run,
  index: number,
  handles: ClientHandle[],
  windows: WindowWatch,
  events: EventWatch,
): Promise<ChildProcess> {
  const { options, collector, ttlMs } = run;
  // A scenario that needs a client stopped inside its window for sure has the client wait for this
  // side's acknowledgement, sent only once the nemesis has had its say (a SIGSTOP comes before it).
  const { windowAck } = run.scripted;
  const config: ClientConfig = {
    index,
    clients: options.clients,
    backend: options.backend,
    endpoints: [...run.deployment!.endpoints],
    namespace: `fencekit-${run.id}`,
    resourceSocket: join(run.work, 'resource.sock'),
    workload: options.workload,
    fencing: run.fencing,
    ttlMs,
    ...(options.session === undefined ? {} : { askedSessionMs: options.session }),
    sessionMs: run.sessionMs,
    windowMs: options.window,
    opTimeoutMs: Math.max(2_000, ttlMs * 4),
    acquire: run.scripted.acquire,
    windowAck,
    tickMs: options.tick,
    seed: options.seed,
    ...(options.abortRate > 0 ? { abortRate: options.abortRate } : {}),
  };
  const source = `client ${index}`;
  collector.source(source);
  let current = index;
  const grants = new GrantTracker();
  let child: ChildProcess | undefined;
  child = await forkReady('client/main.js', [], { kind: 'start', config }, 60_000, (message) => {
    if (message.kind === 'window') {
      current = message.process as number;
      windows.opened(handles[index]!);
      if (windowAck && child?.connected) child.send({ kind: 'continue', seq: message.seq });
      return;
    }
    if (message.kind === 'events') grants.see(message.events as UnindexedEvent[]);
    receive(collector, source, message);
    if (message.kind === 'events' && handles[index]) {
      events.see(handles[index], message.events as UnindexedEvent[]);
    }
  });
  run.children.push(child);
  handles[index] = {
    index,
    get process() {
      return current;
    },
    get grant() {
      return grants.last;
    },
    get pid() {
      return child?.pid;
    },
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
  };
  return child;
}

function receive(collector: HistoryCollector, source: string, message: Record<string, unknown>): void {
  if (message.kind === 'events') collector.add(source, message.events as UnindexedEvent[]);
  else if (message.kind === 'done') {
    collector.announce(source, message.count as number, message.failure as string | undefined);
  }
}
