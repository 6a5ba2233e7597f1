import { describe, expect, it } from 'vitest';
import { pairOperations, parseJepsenEdn } from '../src/history/index.js';
import { renderHtml } from '../src/html/index.js';
import { esc } from '../src/html/markup.js';
import { checkLinearizable } from '../src/linearizability/index.js';
import { applySemantics, casRegister } from '../src/models/index.js';

/** #15 review F8: a NUL in a key reached the HTML raw (HTML has no room for control characters). */
describe('control characters in the HTML report', () => {
  it('escapes C0 and C1 controls as visible \\u escapes, keeping tabs and line ends', () => {
    expect(esc('\u0000k')).toBe('\\u0000k');
    expect(esc('a\u0001b\u007f\u0085<')).toBe('a\\u0001b\\u007f\\u0085&lt;');
    expect(esc('a\tb\nc\r')).toBe('a\tb\nc\r');
  });

  it('writes no control character into the page for a key or value holding one', () => {
    const events = parseJepsenEdn(
      [
        '{:type :invoke, :f :write, :value ["\\u0000k" 1], :process 0, :index 0}',
        '{:type :ok, :f :write, :value ["\\u0000k" 1], :process 0, :index 1}',
        '{:type :invoke, :f :read, :value ["\\u0000k" nil], :process 1, :index 2}',
        '{:type :ok, :f :read, :value ["\\u0000k" "\\u0001x"], :process 1, :index 3}',
      ].join('\n'),
    );
    const split = applySemantics(pairOperations(events), 'cas-register', casRegister(), {
      semantics: 'knossos',
    });
    const result = checkLinearizable(split.ops, split.model);
    expect(result.verdict).toBe('illegal');
    const html = renderHtml(result, split.ops, { timeUnit: 'index' });
    expect(
      [...html].filter((c) => c.charCodeAt(0) < 9 || (c.charCodeAt(0) >= 0x7f && c.charCodeAt(0) <= 0x9f)),
    ).toEqual([]);
    expect(html).toContain('data-key="\\u0000k"');
  });
});
