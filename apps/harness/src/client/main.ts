/**
 * Entry point of one client process (forked by the coordinator). It connects to the backend and the
 * resource, reports `ready`, starts the workload on `go`, and on `stop` finishes its current op,
 * closes everything and reports how many events it sent. A separate process, so the nemesis can
 * SIGSTOP it between its grant and its write.
 */
import { loadBackend } from '../backends/index.js';
import { type SharedLockBackend, withSharedLocks } from '../backends/shared-locks.js';
import type { ClientBackend } from '../backends/types.js';
import { installRequestedMutant } from '../mutation/client-hook.js';
import { seededRandom } from '../nemesis/random.js';
import { ResourceClient } from '../resource/client.js';
import { EventPipe } from '../run/event-pipe.js';
import { SHARED_LOCK_WORKLOADS, workloads } from '../workloads/index.js';
import type { ClientConfig, WorkloadContext } from '../workloads/types.js';
import { sleep } from '../workloads/util.js';
import { recordClose } from './close.js';
import { OpRecorder } from './recorder.js';
import { watchStalls } from './stalls.js';
import { WindowAcks } from './window-acks.js';

const pipe = new EventPipe();
const stopping = new AbortController();
let go: () => void = () => undefined;
const started = new Promise<void>((resolve) => {
  go = resolve;
});

const acks = new WindowAcks();

process.on('message', (message: { kind: string; config?: ClientConfig; seq?: number }) => {
  if (message.kind === 'start' && message.config) void main(message.config);
  else if (message.kind === 'go') go();
  else if (message.kind === 'stop') stopping.abort();
  else if (message.kind === 'continue' && message.seq !== undefined) acks.arrived(message.seq);
});
// The coordinator died: stop rather than run on as an orphan.
process.on('disconnect', () => stopping.abort());

async function main(config: ClientConfig): Promise<void> {
  let backend: ClientBackend | undefined;
  let resource: ResourceClient | undefined;
  try {
    const factory = await loadBackend(config.backend);
    // Mutation mode only (`fencekit run --mutant`, `fencekit mutants`): patch the adapter before it connects.
    const mutation = await installRequestedMutant(config.backend);
    const connect = {
      endpoints: config.endpoints,
      namespace: config.namespace,
      ttlMs: config.ttlMs,
      ...(config.askedSessionMs === undefined ? {} : { sessionMs: config.askedSessionMs }),
    };
    backend = await factory.connect(connect);
    if (mutation) backend = mutation.wrap(backend);
    // Semaphores and read-write locks, opened beside the mutex client for the workloads that use them.
    if (SHARED_LOCK_WORKLOADS.has(config.workload)) {
      backend = await withSharedLocks(config.backend, backend, connect);
    }
    resource = await ResourceClient.connect(config.resourceSocket, config.opTimeoutMs);
  } catch (error) {
    process.send?.({ kind: 'error', message: (error as Error).message });
    await backend?.close().catch(() => undefined);
    process.exit(1);
  }
  process.send?.({ kind: 'ready' });
  await started;
  // Its own stalls (a loaded scheduler, GC, SIGSTOP) from the start of the run, recorded at close.
  const stallWatch = watchStalls(Math.max(20, Math.floor(config.ttlMs / 2)));
  const recorder = new OpRecorder(config.index, config.clients, pipe);
  const context: WorkloadContext = {
    config,
    locks: backend.locks,
    elections: backend.elections,
    sharedLocks: (backend as Partial<SharedLockBackend>).sharedLocks,
    guardedWrite: backend.guardedWrite,
    ...(backend.sends === undefined ? {} : { sends: backend.sends }),
    resource,
    recorder,
    stopping: stopping.signal,
    random: seededRandom(config.seed * 1_000 + config.index),
    async window(f) {
      const seq = acks.next();
      // The coordinator must see this client's grant before its window opens: send pending events first.
      pipe.flush();
      process.send?.({ kind: 'window', process: recorder.process, f, seq });
      // Bounded: a lost acknowledgement costs at most an op timeout, never the run.
      if (config.windowAck) await acks.wait(seq, config.opTimeoutMs, stopping.signal);
      await sleep(config.windowMs);
    },
  };
  let failure: string | undefined;
  try {
    await workloads[config.workload](context);
  } catch (error) {
    failure = (error as Error).stack ?? String(error);
  }
  await recordClose(recorder, backend, config, stallWatch.stop());
  resource.close();
  pipe.finish(failure ? { failure } : {});
}
