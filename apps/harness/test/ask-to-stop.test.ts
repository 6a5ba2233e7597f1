import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { askToStop } from '../src/run/child.js';

/**
 * A child whose IPC channel is already closed, as after a Ctrl-C to the whole process group: Node's
 * `send` then emits `error` (EPIPE) unless given a callback, and an `error` event nobody listens to
 * throws — the harness crashed in `stopProcesses` that way (seen by the #18 review).
 */
function deadChild() {
  const events = new EventEmitter();
  const sent: unknown[] = [];
  return {
    connected: true,
    sent,
    send(message: unknown, callback?: (error: Error | null) => void): boolean {
      sent.push(message);
      const error = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
      if (callback) callback(error);
      else events.emit('error', error);
      return false;
    },
  };
}

describe('askToStop', () => {
  it('asks a live child to stop', () => {
    const child = deadChild();
    expect(() => askToStop(child)).not.toThrow();
    expect(child.sent).toEqual([{ kind: 'stop' }]);
  });

  it('does not throw when the child is gone and the send fails with EPIPE', () => {
    const child = deadChild();
    // What teardown did before: `child.send({ kind: 'stop' })` without a callback.
    expect(() => child.send({ kind: 'stop' })).toThrow(/EPIPE/);
    expect(() => askToStop(child)).not.toThrow();
  });

  it('sends nothing over a channel already known closed', () => {
    const child = { ...deadChild(), connected: false };
    askToStop(child);
    expect(child.sent).toEqual([]);
  });
});
