import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
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

    /** Starts an approval through the form; returns its card in the service panel. */
    async function startApproval(page: Page, title: string) {
      await type(page, `/approve ${title}`);
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await expect
        .poll(() => modal.getByText('Suggested approver: Maria Lopez').count(), { timeout: 10_000 })
        .toBe(1);
      await modal.getByLabel('Note').fill('For the resilience test.');
      const before = sandbox?.simulator.approvals().length ?? 0;
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect
        .poll(() => sandbox?.simulator.approvals().length, { timeout: 10_000 })
        .toBe(before + 1);
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      const djbh = sandbox?.simulator.approvals()[before]?.djbh ?? '';
      const card = page.locator(`.approval[data-djbh="${djbh}"]`);
      await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
      return Object.assign(card, { djbh });
    }

    /**
     * Whether a card's title and badge lie inside it, and the card inside the window, measured in
     * one go in the page: the service panel redraws its cards as it refreshes.
     */
    const cardLayout = (page: Page, djbh: string) =>
      page.evaluate((id) => {
        const card = document.querySelector(`.approval[data-djbh="${id}"]`);
        const badge = card?.querySelector('.state');
        const title = card?.querySelector('strong');
        if (!card || !badge || !title) return null;
        const c = card.getBoundingClientRect();
        const inside = (r: DOMRect) => r.left >= c.left && r.right <= c.right + 0.5;
        return {
          badgeInside: inside(badge.getBoundingClientRect()),
          titleInside: inside(title.getBoundingClientRect()),
          cardInWindow: c.left >= 0 && c.right <= window.innerWidth,
        };
      }, djbh);
    const allInside = { badgeInside: true, titleInside: true, cardInWindow: true };

    const openViews = (page: Page) =>
      page.evaluate(async () => {
        const me = (document.getElementById('who') as HTMLSelectElement).value;
        const state = await (await fetch(`/sandbox/api/state?user=${me}`)).json();
        return (state.views as unknown[]).length;
      });

    it('closes a modal with Esc and with a click on the backdrop, and the app forgets it', async () => {
      const page = await openPage();
      for (const close of [() => page.keyboard.press('Escape'), () => page.mouse.click(8, 8)]) {
        await type(page, '/approve New laptop');
        await page.getByRole('dialog', { name: 'Request approval' }).waitFor({ timeout: 10_000 });
        await expect.poll(() => openViews(page)).toBe(1);
        await close();
        await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
        await expect.poll(() => openViews(page)).toBe(0);
      }
      // A click inside the modal leaves it open.
      await type(page, '/approve New laptop');
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await modal.waitFor({ timeout: 10_000 });
      await modal.locator('header h2').click();
      expect(await page.getByRole('dialog').count()).toBe(1);
      await page.keyboard.press('Escape');
      // Esc closes the Run workflow panel too.
      await page.getByRole('button', { name: 'Run workflow' }).click();
      await page.getByRole('dialog', { name: 'Run workflow' }).waitFor();
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      await page.close();
    }, 60_000);

    it('keeps the service panel usable with the Run workflow panel open', async () => {
      const page = await openPage();
      const card = await startApproval(page, 'Standing desk');
      await page.getByRole('button', { name: 'Run workflow' }).click();
      const panel = page.getByRole('dialog', { name: 'Run workflow' });
      await panel.waitFor();
      // Playwright clicks only what receives the click: a covering overlay would time this out.
      await card.getByRole('button', { name: 'Agree' }).click({ timeout: 3000 });
      await expect.poll(() => card.locator('.state').textContent()).toContain('approved');
      expect(await panel.isVisible()).toBe(true);
      await panel.getByLabel('Title').fill('Still typing here');
      await shot(page, 'workflow-and-service-panel');
      await page.keyboard.press('Escape');
      await page.close();
    }, 60_000);

    it('keeps a long unbroken title and its badge inside the card', async () => {
      const page = await openPage();
      const card = await startApproval(page, `Quote${'-NoSpacesHere'.repeat(12)}`);
      await expect.poll(() => cardLayout(page, card.djbh)).toEqual(allInside);
      await page.locator('#service').screenshot({ path: join(artifacts, 'long-title-card.png') });
      await page.close();
    }, 60_000);

    it('is usable 480 px wide: no sideways scrolling, the channel, composer and service panel reachable', async () => {
      const page = await openPage({ width: 480, height: 800 });
      // Polled: a modal is redrawn when the app updates it, and a box is null meanwhile.
      const fitsWindow = async (locator: Locator) => {
        const b = await locator.boundingBox({ timeout: 1000 }).catch(() => null);
        return b !== null && b.x >= 0 && b.x + b.width <= 480;
      };
      const width = () => page.evaluate(() => document.documentElement.scrollWidth);
      expect(await width()).toBeLessThanOrEqual(480);
      await shot(page, 'narrow-1-channel');
      await expect.poll(() => fitsWindow(page.getByLabel('Message', { exact: true }))).toBe(true);
      const card = await startApproval(page, `Narrow${'-window'.repeat(20)}`);
      expect(await width()).toBeLessThanOrEqual(480);
      // The cards are redrawn as the service panel refreshes; the panel itself stays.
      await page.locator('#service').scrollIntoViewIfNeeded();
      await expect.poll(() => cardLayout(page, card.djbh)).toEqual(allInside);
      await shot(page, 'narrow-2-service-panel');
      // The form fits the window and Esc closes it.
      await page.getByLabel('Message', { exact: true }).scrollIntoViewIfNeeded();
      await type(page, '/approve Narrow form');
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await modal.waitFor({ timeout: 10_000 });
      await expect.poll(() => fitsWindow(modal)).toBe(true);
      await shot(page, 'narrow-3-form');
      await page.keyboard.press('Escape');
      // Run workflow opens in the page's flow, and the service panel stays usable below it.
      await page.getByRole('button', { name: 'Run workflow' }).click();
      const panel = page.getByRole('dialog', { name: 'Run workflow' });
      await panel.waitFor();
      await expect.poll(() => fitsWindow(panel)).toBe(true);
      await card.getByRole('button', { name: 'Agree' }).click({ timeout: 3000 });
      await expect.poll(() => card.locator('.state').textContent()).toContain('approved');
      expect(await width()).toBeLessThanOrEqual(480);
      await shot(page, 'narrow-4-workflow');
      await page.close();
    }, 60_000);
  },
);
