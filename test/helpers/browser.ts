// A real browser for the page tests: Debian's headless `chromium` (scripts/setup-browser.sh
// installs it) driven by playwright-core, with a fresh profile each time and every background
// service that would reach the network turned off. Screenshots go to test-output/browser/
// (git-ignored). Pages are loaded from the test server on loopback only.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { uninstrumentedEnv } from './uninstrumented-env.js';

export const SCREENSHOT_DIR = fileURLToPath(new URL('../../../test-output/browser/', import.meta.url));

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error('chromium is not installed: run `sh scripts/setup-browser.sh` (apt-get install -y chromium) or set CHROMIUM_PATH');
  return found;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Messages the page printed to its console, and its uncaught errors. */
  console: string[];
  /** Every URL the page requested. */
  requests: string[];
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'matte-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1200, height: 900 },
    timeout: 60_000,
    env: uninstrumentedEnv(),
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60_000);
  const messages: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => messages.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return {
    context,
    page,
    console: messages,
    requests,
    async screenshot(name) {
      const path = join(SCREENSHOT_DIR, name);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
