import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

describe('README example', () => {
  it('is the file examples/quick-start.mjs and runs as documented', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/quick-start.mjs', import.meta.url), 'utf8');
    const body = example.split('\n').slice(1).join('\n').trim();
    expect(readme).toContain(body);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      // Through a URL: the example is plain JS without types, and must run exactly as a user runs it.
      await import(new URL('../examples/quick-start.mjs', import.meta.url).href);
      expect(log.mock.calls).toEqual([
        ['alice bought one with fence 1'],
        ['bob bought one with fence 2'],
        ['refused: Write to "sku-42" with fence 1 refused: fence 2 was already seen'],
        [{ value: 8, fence: 2n }],
      ]);
    } finally {
      log.mockRestore();
    }
  });
});
