// The browser tests' pages (C3): a fresh Chromium context per signed-in person, a dialog treated as a script that
// ran (escaping failed), and the CONSOLE_SCREENSHOTS hook (npm run console:screenshots).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { World } from './world.js';

const shots = process.env.CONSOLE_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });

export function sessions(world: () => World) {
  const contexts: BrowserContext[] = [];
  const newPage = async (options: BrowserContextOptions = {}): Promise<Page> => {
    const context = await world().browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
    contexts.push(context);
    const page = await context.newPage();
    page.on('dialog', (d) => {
      throw new Error(`a dialog opened: ${d.message()}`);
    });
    return page;
  };
  return {
    newPage,
    async signIn(surface: 'console' | 'portal', token: string, options: BrowserContextOptions = {}): Promise<Page> {
      const page = await newPage(options);
      await page.goto(`${world().url}/${surface}/sign-in`);
      await page.fill('input[name=token]', token);
      await page.click('button[type=submit]');
      await page.waitForURL((u) => !u.pathname.endsWith('/sign-in'));
      expect(page.url()).not.toContain('sign-in');
      return page;
    },
    async shoot(page: Page, name: string) {
      if (shots) await page.screenshot({ path: join(shots, `console-${name}.png`), fullPage: true });
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
    },
  };
}
