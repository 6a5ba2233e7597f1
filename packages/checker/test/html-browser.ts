import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** Headless Chromium for the HTML tests; fails loudly (never skips) when the browser is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: the HTML tests need it — apt-get install chromium`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: 60_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface LoadedPage {
  page: Page;
  /** Console errors, page errors and any request that was not for the file itself. */
  problems: string[];
  close(): Promise<void>;
}

/** Writes `html` to a temporary file and opens it, recording anything that went wrong while loading. */
export async function openHtml(browser: Browser, html: string): Promise<LoadedPage> {
  const dir = await mkdtemp(join(tmpdir(), 'fencekit-html-'));
  const file = join(dir, 'report.html');
  await writeFile(file, html);
  const url = pathToFileURL(file).href;
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (r.url() !== url) problems.push(`request: ${r.url()}`);
  });
  await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
  return {
    page,
    problems,
    async close() {
      await page.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
