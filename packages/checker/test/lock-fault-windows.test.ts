import { describe, expect, it } from 'vitest';
import { parseHistoryJsonl } from '../src/history/index.js';
import { checkBounds, checkLiveness, faultWindows } from '../src/lock/index.js';

// The reviewer's reproductions (R2 #9), as they were given.
const startWithoutName = [
  '{"index":0,"time":0,"process":"nemesis","type":"invoke","f":"start","value":{"fault":"partition"}}',
  '{"index":1,"time":1000,"process":2,"type":"invoke","f":"acquire","value":{"resource":"r","waitMs":10000}}',
  '{"index":2,"time":4000000000,"process":"nemesis","type":"ok","f":"start","value":null}',
  '{"index":3,"time":5000000000,"process":"nemesis","type":"invoke","f":"stop","value":{"fault":"partition"}}',
  '{"index":4,"time":5000000001,"process":"nemesis","type":"ok","f":"stop","value":{"fault":"partition"}}',
  '{"index":5,"time":5000000002,"process":2,"type":"ok","f":"acquire","value":{"grant":"a","resource":"r","validUntil":"9000000000","at":"5000000002"}}',
].join('\n');

const failedStop = [
  '{"index":0,"time":0,"process":"nemesis","type":"invoke","f":"start","value":{"fault":"pause-client","process":1}}',
  '{"index":1,"time":10,"process":"nemesis","type":"ok","f":"start","value":{"fault":"pause-client","process":1}}',
  '{"index":2,"time":1000000000,"process":"nemesis","type":"invoke","f":"stop","value":{"fault":"pause-client"}}',
  '{"index":3,"time":1100000000,"process":"nemesis","type":"fail","f":"stop","value":{"fault":"pause-client"},"error":"SIGCONT failed"}',
  '{"index":4,"time":2000000000,"process":1,"type":"invoke","f":"release","value":{"boundMs":100}}',
  '{"index":5,"time":9000000000,"process":1,"type":"ok","f":"release","value":null}',
].join('\n');

describe('fault windows', () => {
  it('a start completion that does not name its fault still runs from its invoke (was: from the completion, starved)', () => {
    const h = parseHistoryJsonl(startWithoutName);
    expect(faultWindows(h)).toEqual([
      expect.objectContaining({ fault: 'partition', start: 0, end: 5_000_000_001 }),
    ]);
    expect(checkLiveness(h).verdict).toBe('ok');
  });

  it('a stop that completed fail did not heal: the pause stays in force (was: ended, overran)', () => {
    const h = parseHistoryJsonl(failedStop);
    expect(faultWindows(h)).toEqual([
      expect.objectContaining({ fault: 'pause-client', end: Number.POSITIVE_INFINITY }),
    ]);
    expect(checkBounds(h).verdict).toBe('ok');
    // A stop that completed info may have healed: it ends the fault, and the release overran.
    const info = parseHistoryJsonl(
      failedStop.replace('"type":"fail","f":"stop"', '"type":"info","f":"stop"'),
    );
    expect(faultWindows(info)[0]!.end).toBe(1_100_000_000);
    expect(checkBounds(info).verdict).toBe('illegal');
  });

  it('keeps 200 000 unstopped faults (spreading them into push overflowed the stack)', () => {
    const h = [];
    for (let i = 0; i < 200_000; i++) {
      h.push({
        index: 2 * i,
        time: 2 * i,
        process: 'nemesis',
        type: 'invoke' as const,
        f: 'start',
        value: { fault: 'kill' },
      });
      h.push({
        index: 2 * i + 1,
        time: 2 * i + 1,
        process: 'nemesis',
        type: 'ok' as const,
        f: 'start',
        value: { fault: 'kill' },
      });
    }
    expect(faultWindows(h)).toHaveLength(200_000);
  });

  it('answers concurrent starts by name, each from its own invoke', () => {
    const h = parseHistoryJsonl(
      [
        '{"index":0,"time":0,"process":"nemesis","type":"invoke","f":"start","value":{"fault":"x"}}',
        '{"index":1,"time":1,"process":"nemesis","type":"invoke","f":"start","value":{"fault":"y"}}',
        '{"index":2,"time":5,"process":"nemesis","type":"ok","f":"start","value":{"fault":"x"}}',
        '{"index":3,"time":6,"process":"nemesis","type":"ok","f":"start","value":{"fault":"y"}}',
      ].join('\n'),
    );
    expect(faultWindows(h).map((w) => [w.fault, w.start])).toEqual([
      ['x', 0],
      ['y', 1],
    ]);
  });
});
