import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/demo.js';

describe('demo', () => {
  it('shows the stale holder refused by the fenced store', async () => {
    const lines: string[] = [];
    const outcome = await runDemo((line) => lines.push(line));
    expect(outcome).toEqual({ staleWriteRefused: true, finalStock: 0, finalFence: 2n });
    expect(lines.join('\n')).toMatch(/buyer A: write with fence 1 REFUSED/);
  });
});
