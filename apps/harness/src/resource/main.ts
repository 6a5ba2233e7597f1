/**
 * Entry point of the resource process (forked by the coordinator with an IPC channel). It owns the
 * SQLite file, serves the resource protocol on a unix socket, and streams what it saw to the
 * coordinator. Messages in: `{kind:'start', ...}`, `{kind:'stop'}`. Out: `ready`, `events`, `done`.
 */
import { rmSync } from 'node:fs';
import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { EventPipe } from '../run/event-pipe.js';
import { serveResource } from './server.js';
import { ResourceStore } from './store.js';

interface StartMessage {
  kind: 'start';
  socketPath: string;
  dbPath: string;
  stock: number;
  fencing: boolean;
}

const pipe = new EventPipe();

process.on('message', (message: { kind: string }) => {
  if (message.kind === 'start') void start(message as StartMessage);
});

/** What to undo if the coordinator goes away without a `stop` (it died): nothing is left behind it (#20). */
let cleanup: (() => void) | undefined;
process.on('disconnect', () => {
  try {
    cleanup?.();
  } finally {
    process.exit(0);
  }
});

async function start(config: StartMessage): Promise<void> {
  const store = new ResourceStore(config.dbPath, config.stock, config.fencing);
  const init: UnindexedEvent = {
    time: nowNs(),
    process: 'resource',
    type: 'ok',
    f: 'init',
    value: { stock: config.stock },
  };
  pipe.push(init);
  const server = await serveResource({
    socketPath: config.socketPath,
    store,
    record: (event) => pipe.push(event),
  });
  cleanup = () => {
    server.close();
    store.close();
    rmSync(config.dbPath, { force: true });
  };
  process.send?.({ kind: 'ready' });
  process.on('message', (message: { kind: string }) => {
    if (message.kind !== 'stop') return;
    server.close();
    store.close();
    rmSync(config.dbPath, { force: true });
    pipe.finish();
  });
}
