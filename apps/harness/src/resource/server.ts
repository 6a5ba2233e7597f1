import type { Server } from 'node:net';
import { nowNs } from '../history/clock.js';
import type { UnindexedEvent } from '../history/event.js';
import { serveLines } from '../rpc/line-socket.js';
import { SharedResource } from './shared-ops.js';
import type { ResourceStore } from './store.js';

/**
 * The resource's protocol. Every access is stamped with the resource's own monotonic time the moment
 * it takes effect and recorded as a `process: "resource"` line: the checkers judge the lock by what
 * the resource saw, never by what a client believed.
 */
export interface ResourceOptions {
  socketPath: string;
  store: ResourceStore;
  record: (event: UnindexedEvent) => void;
}

type Request = Record<string, unknown>;

export function serveResource(options: ResourceOptions): Promise<Server> {
  const { store, record } = options;
  const emit = (f: string, value: Record<string, unknown>): number => {
    const time = nowNs();
    record({ time, process: 'resource', type: 'ok', f, value });
    return time;
  };
  // The semaphore pool and read-write register (shared-ops.ts), beside the inventory.
  const shared = new SharedResource(store.fencing);
  return serveLines(options.socketPath, (request: Request) => {
    const client = request.client as number | string;
    const fenceText = typeof request.fence === 'string' ? request.fence : undefined;
    const fence = fenceText === undefined ? undefined : BigInt(fenceText);
    const withFence = fenceText === undefined ? {} : { fence: fenceText };
    switch (request.op) {
      case 'read': {
        const state = store.read();
        const time = emit('read', { client, stock: state.stock, ...withFence });
        return { ...state, time };
      }
      case 'write': {
        const stock = request.stock as number;
        const accepted = store.write(stock, fence);
        const time = emit('write', { client, stock, ...withFence, accepted });
        return { accepted, time };
      }
      case 'cas': {
        const stock = request.stock as number;
        const accepted = store.compareAndSet(stock, request.version as number);
        const time = emit('write', { client, stock, accepted });
        return { accepted, time };
      }
      case 'enter': {
        const accepted = store.admit('section', fence, false);
        const time = emit('enter', { client, ...withFence, accepted });
        return { accepted, time };
      }
      case 'leave': {
        const time = emit('leave', { client, ...withFence });
        return { time };
      }
      case 'claim': {
        const term = request.term as string;
        const accepted = store.admit('leader', BigInt(term), true);
        const time = emit('claim', { client, term, ...withFence, accepted });
        return { accepted, time };
      }
      case 'run': {
        const time = emit('run', { client, tick: request.tick as number, ...withFence, accepted: true });
        return { accepted: true, time };
      }
      default: {
        const answer = shared.handle(request, emit);
        if (answer === undefined) throw new Error(`unknown resource op ${JSON.stringify(request.op)}`);
        return answer;
      }
    }
  });
}
