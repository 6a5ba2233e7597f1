import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  formatHistoryEvent,
  type HistoryEvent,
  HistoryParseError,
  HistoryShapeError,
  HistoryWriter,
  pairOperations,
  parseHistoryJsonl,
  parseJepsenEdn,
  parseOperations,
  parsePorcupineLog,
  readHistoryJsonl,
  showValue,
} from '../src/history/index.js';

const acquire: HistoryEvent = {
  index: 0,
  time: 123456789,
  process: 3,
  type: 'invoke',
  f: 'acquire',
  value: null,
};
const granted: HistoryEvent = {
  index: 7,
  time: 123999000,
  process: 3,
  type: 'ok',
  f: 'acquire',
  value: { fence: '41' },
};

describe('history.jsonl', () => {
  it('round-trips events through the writer and the streaming reader', async () => {
    const stream = new PassThrough();
    const writer = new HistoryWriter(stream);
    const chunks: string[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c.toString()));
    await writer.write(acquire);
    await writer.write({ ...granted, key: 'r1' });
    await writer.write({
      index: 8,
      time: 124000000,
      process: 'nemesis',
      type: 'info',
      f: 'partition',
      value: null,
      error: 'halves',
    });
    await writer.close();
    const text = chunks.join('');
    expect(text.split('\n')[0]).toBe(
      '{"index":0,"time":123456789,"process":3,"type":"invoke","f":"acquire","value":null}',
    );
    const read: HistoryEvent[] = [];
    for await (const e of readHistoryJsonl(Readable.from([text]))) read.push(e);
    expect(read).toEqual(parseHistoryJsonl(text));
    expect(read[1]).toEqual({ ...granted, key: 'r1' });
    expect(read[2]?.process).toBe('nemesis');
  });

  it('writes bigint fences as decimal strings', () => {
    expect(formatHistoryEvent({ ...granted, value: { fence: 41n } })).toContain('"fence":"41"');
  });

  it('names file, line and what was expected for a bad line', () => {
    const text = `${formatHistoryEvent(acquire)}\n\n{"index":1,"time":"soon","process":3,"type":"ok","f":"acquire","value":null}\n`;
    try {
      parseHistoryJsonl(text, 'h.jsonl');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(HistoryParseError);
      const e = error as HistoryParseError;
      expect([e.file, e.line]).toEqual(['h.jsonl', 3]);
      expect(e.expected).toContain('"time"');
      expect(e.message).toMatch(/^h\.jsonl:3: expected "time" as a number/);
    }
    expect(() => parseHistoryJsonl('{"index":0', 'x.jsonl')).toThrow(
      /x\.jsonl:1: expected one JSON object per line/,
    );
    expect(() =>
      parseHistoryJsonl('{"index":0,"time":1,"process":1,"type":"done","f":"r","value":1}'),
    ).toThrow(/invoke \| ok \| fail \| info/);
  });
});

describe('Jepsen EDN', () => {
  it('reads keywords, vectors, nil, :key, comments and both top-level layouts', () => {
    const text = `; a comment
[{:process 0, :type :invoke, :f :cas, :value [1 2], :key "k", :time 10}
 {:process 0, :type :ok, :f :cas, :value [1 2], :key "k", :time 20}
 {:process :nemesis, :type :info, :f :start, :value nil}]`;
    const events = parseJepsenEdn(text, 'h.edn');
    expect(events[0]).toEqual({
      index: 0,
      time: 10,
      process: 0,
      type: 'invoke',
      f: 'cas',
      value: [1, 2],
      key: 'k',
    });
    expect(events[2]).toMatchObject({ process: 'nemesis', type: 'info', f: 'start', value: null });
    const loose = parseJepsenEdn(
      '{:process 1, :type :invoke, :f :read, :value nil}\n{:process 1, :type :ok, :f :read, :value :x}\n',
    );
    // A keyword value stays a keyword (:x is not "x" under Clojure's =).
    expect(loose.map((e) => showValue(e.value))).toEqual(['null', ':x']);
  });

  it('drops fail ops and leaves info ops open, as knossos does', () => {
    const ops = parseOperations(
      `[{:process 0, :type :invoke, :f :write, :value 1}
        {:process 1, :type :invoke, :f :write, :value 2}
        {:process 0, :type :fail, :f :write, :value 1, :error :timeout}
        {:process 1, :type :info, :f :write, :value 2}
        {:process 2, :type :invoke, :f :read, :value nil}
        {:process 2, :type :ok, :f :read, :value 2}
        {:process 3, :type :invoke, :f :read, :value nil}]`,
      'edn',
    );
    expect(ops.map((op) => [op.process, op.status, op.ret])).toEqual([
      [1, 'info', Number.POSITIVE_INFINITY],
      [2, 'ok', 5],
      [3, 'info', Number.POSITIVE_INFINITY],
    ]);
    expect(ops.map((op) => op.id)).toEqual([0, 1, 2]);
  });

  it('names the line of malformed input', () => {
    expect(() =>
      parseJepsenEdn(
        '[{:process 0, :type :invoke, :f :read}\n {:process 0 :type :ok, :f :read, :value #1x "x"}]',
        'm.edn',
      ),
    ).toThrow(/m\.edn:2: expected a tag \(a symbol\) after #, found "#1x"/);
    expect(() => parseJepsenEdn('[{:process 0, :type :begin, :f :read}]', 'm.edn')).toThrow(
      /m\.edn:1: expected :type as :invoke/,
    );
    expect(() => parseJepsenEdn('[{:process 0, :type :ok, :f :read', 'm.edn')).toThrow(HistoryParseError);
  });
});

describe("porcupine's Jepsen log lines", () => {
  const log = [
    'INFO  jepsen.util - 0\t:invoke\t:cas\t[1 4]',
    'INFO  jepsen.util - 1\t:invoke\t:read\tnil',
    'INFO  jepsen.util - 2\t:invoke\t:write\t3',
    'INFO  jepsen.util - 0\t:fail\t:cas\t[1 4]',
    'INFO  jepsen.util - 1\t:fail\t:read\t:timed-out',
    'INFO  jepsen.util - 2\t:info\t:write\t:timed-out',
    'INFO  jepsen.util - 3\t:invoke\t:read\tnil',
    'INFO  jepsen.util - 3\t:ok\t:read\tnil',
  ].join('\n');

  it('reads :fail :cas as a completed cas that returned false, a timed-out read as unknown, :info as open', () => {
    const ops = parsePorcupineLog(log, 'etcd.log');
    expect(ops[0]).toMatchObject({ f: 'cas', input: [1, 4], output: false, status: 'ok', call: 1, ret: 4 });
    expect(ops[1]).toMatchObject({ f: 'read', status: 'info', call: 2, ret: 5 });
    expect(ops[2]).toMatchObject({ f: 'write', input: 3, status: 'info', ret: Number.POSITIVE_INFINITY });
    expect(ops[3]).toMatchObject({ f: 'read', output: null, status: 'ok' });
  });

  it('names file and line of a line it cannot read', () => {
    expect(() => parsePorcupineLog('INFO  jepsen.util - 0\t:invoke\t:cas\t[1]', 'e.log')).toThrow(
      /e\.log:1: expected \[old new\] integers/,
    );
    expect(() => parsePorcupineLog('\nWARN something else', 'e.log')).toThrow(
      /e\.log:2: expected INFO {2}jepsen\.util/,
    );
    expect(() => parsePorcupineLog('INFO  jepsen.util - 0\t:ok\t:read\t1', 'e.log')).toThrow(
      /an open :read invoke by process 0/,
    );
  });
});

describe('pairing', () => {
  it('pairs by process, keeps failed ops on request and skips the nemesis', () => {
    const events: HistoryEvent[] = [
      acquire,
      { index: 1, time: 5, process: 'nemesis', type: 'info', f: 'kill', value: null },
      { index: 2, time: 6, process: 4, type: 'invoke', f: 'release', value: null },
      { index: 3, time: 7, process: 4, type: 'fail', f: 'release', value: null, error: 'not-held' },
      granted,
    ];
    expect(pairOperations(events)).toEqual([
      {
        id: 0,
        process: 3,
        f: 'acquire',
        input: null,
        output: { fence: '41' },
        call: 123456789,
        ret: 123999000,
        status: 'ok',
      },
    ]);
    expect(pairOperations(events, { failed: 'keep' }).map((op) => op.status)).toEqual(['ok', 'fail']);
  });

  it('rejects a completion without an invoke and a second invoke while one is open', () => {
    expect(() => pairOperations([granted])).toThrow(HistoryShapeError);
    expect(() => pairOperations([acquire, { ...acquire, index: 1 }])).toThrow(
      /expected a completion of process 3's :acquire \(invoked at 123456789\) before its next invoke/,
    );
    expect(() => pairOperations([acquire, { ...granted, f: 'release' }])).toThrow(
      /expected a completion of process 3's :acquire, found :ok :release/,
    );
  });
});

describe('loading files', () => {
  it('streams a JSONL file into operations', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadOperations } = await import('../src/history/index.js');
    const dir = await mkdtemp(join(tmpdir(), 'fencekit-history-'));
    try {
      const path = join(dir, 'history.jsonl');
      await writeFile(path, `${formatHistoryEvent(acquire)}\n${formatHistoryEvent(granted)}\n`);
      const ops = await loadOperations(path);
      expect(ops).toEqual([
        {
          id: 0,
          process: 3,
          f: 'acquire',
          input: null,
          output: { fence: '41' },
          call: 123456789,
          ret: 123999000,
          status: 'ok',
        },
      ]);
      await writeFile(path, `${formatHistoryEvent(acquire)}\nnot json\n`);
      await expect(loadOperations(path)).rejects.toThrow(
        /history\.jsonl:2: expected one JSON object per line/,
      );
      await expect(loadOperations(join(dir, 'history.xml'))).rejects.toThrow(HistoryShapeError);
      // Pairing errors name the file and the line of the offending event.
      await writeFile(
        path,
        `${formatHistoryEvent(acquire)}\n\n${formatHistoryEvent({ ...granted, process: 9 })}\n`,
      );
      await expect(loadOperations(path)).rejects.toThrow(
        /history\.jsonl:3: expected an open invoke by process 9 before this completion, found ":ok :acquire"/,
      );
      expect(() =>
        parseOperations(
          '[{:process 1, :type :invoke, :f :read}\n {:process 2, :type :ok, :f :read}]',
          'edn',
          'p.edn',
        ),
      ).toThrow(/p\.edn:2: expected an open invoke by process 2/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
