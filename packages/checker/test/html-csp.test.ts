import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHtml } from '../src/html/index.js';
import { launchChromium, openHtml } from './html-browser.js';

/**
 * #14 review LOW 15: the page's policy allowed every inline script ('unsafe-inline') and set no base-uri or
 * form-action, so markup that got past the escaping could run script. Only the page's own script, by hash.
 */
const html = renderHtml({ verdict: 'ok', violations: [] }, [], { title: 'csp' });
const policy = () => {
  const content = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1] ?? '';
  const directives = content.replaceAll('&#39;', "'").split(';');
  return new Map(directives.map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
};

describe("the checker page's Content-Security-Policy", () => {
  it('allows the page’s one inline script by its sha256, no other, and sets base-uri and form-action to none', () => {
    const csp = policy();
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256').update(scripts[0]!, 'utf8').digest('base64');
    expect(csp.get('script-src')).toEqual([`'sha256-${hash}'`]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(csp.get('form-action')).toEqual(["'none'"]);
  });

  describe('in Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
    });

    it('runs the page’s own script and refuses one slipped into the page', async () => {
      const own = await openHtml(browser, html);
      expect(own.problems).toEqual([]);
      await own.close();
      const slipped = html.replace('</main>', '<script>document.title="PWNED"</script></main>');
      const loaded = await openHtml(browser, slipped);
      expect(await loaded.page.title()).not.toBe('PWNED');
      expect(loaded.problems.join('\n')).toMatch(/Content Security Policy/);
      await loaded.close();
    }, 60_000);
  });
});
