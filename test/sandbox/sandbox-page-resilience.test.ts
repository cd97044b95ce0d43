import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/sandbox.ts';
import { freePort } from '../helpers/app-process.ts';

// The sandbox page when things go wrong or the window is small: the app stopping and coming back,
// modals closed with Esc or the backdrop, a narrow window. Debian's Chromium via playwright-core;
// screenshots go to test-artifacts/sandbox/.

const CHROMIUM = '/usr/bin/chromium';
const skipReason = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run does)`;
const artifacts = new URL('../../test-artifacts/sandbox/', import.meta.url).pathname;

describe.skipIf(skipReason)(
  `the sandbox page when the app stops, and in a narrow window${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let sandbox: Sandbox | undefined;
    let browser: Browser;
    let dir: string;
    let port: number;

    const start = async () => {
      sandbox = await startSandbox(
        loadConfig({
          APP_MODE: 'sandbox',
          PORT: String(port),
          SANDBOX_DATA_DIR: dir,
          LOG_LEVEL: 'fatal',
        }),
        createLogger('fatal'),
      );
      return sandbox;
    };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'sandbox-page-'));
      mkdirSync(artifacts, { recursive: true });
      port = await freePort();
      await start();
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await sandbox?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    async function openPage(viewport = { width: 1440, height: 900 }) {
      const page = await browser.newPage({ viewport });
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.locator('body[data-ready="true"]').waitFor();
      const option = page.locator('#who option').filter({ hasText: 'Sam Taylor' });
      await page.getByLabel('You are').selectOption({ label: (await option.textContent()) ?? '' });
      await expect.poll(() => page.locator('#title').textContent()).toBe('# general');
      return page;
    }

    async function type(page: Page, text: string) {
      const box = page.getByLabel('Message', { exact: true });
      await box.fill(text);
      await box.press('Enter');
    }

    const shot = (page: Page, name: string) =>
      page.screenshot({ path: join(artifacts, `${name}.png`) });

    it('says a command failed while the app is down, closes a modal on ×, and recovers after a restart without a reload', async () => {
      const page = await openPage();
      await type(page, '/approve New laptop');
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await modal.waitFor({ timeout: 10_000 });
      // Marks this document: a reload would lose it.
      await page.evaluate(() => {
        (window as unknown as { notReloaded: boolean }).notReloaded = true;
      });

      await sandbox?.stop();
      sandbox = undefined;
      await page.locator('#connection:not([hidden])').waitFor({ timeout: 10_000 });
      // Slack closes a modal at once, whether or not the app hears of it.
      await modal.getByRole('button', { name: 'Close' }).first().click();
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      // A command the app cannot get says so, from Slackbot, to you alone.
      await type(page, '/approve help');
      const failed = page
        .locator('#messages article.ephemeral')
        .filter({ hasText: '/approve failed with the error "dispatch_failed"' });
      await expect.poll(() => failed.count(), { timeout: 5000 }).toBe(1);
      await expect.poll(() => failed.textContent()).toContain('Only visible to you');
      await expect.poll(() => page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
      await shot(page, 'offline-command-failed');

      await start();
      await page.locator('body[data-online="true"]').waitFor({ timeout: 15_000 });
      expect(await page.evaluate(() => (window as { notReloaded?: boolean }).notReloaded)).toBe(
        true,
      );
      expect(await page.locator('#connection').isHidden()).toBe(true);
      await expect.poll(() => page.locator('#title').textContent()).toBe('# general');
      expect(await page.getByLabel('You are').locator('option:checked').textContent()).toContain(
        'Sam Taylor',
      );
      // The restarted app answers again, in the channel the page shows.
      await type(page, '/approve help');
      await expect
        .poll(() => page.locator('#messages').getByText('/approve status').count(), {
          timeout: 10_000,
        })
        .toBeGreaterThan(0);
      await shot(page, 'reconnected');
      await page.close();
    }, 60_000);
  },
);
