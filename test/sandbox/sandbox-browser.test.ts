import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/sandbox.ts';

// The whole story in a real browser: Debian's Chromium driven by playwright-core.
// Screenshots go to test-artifacts/sandbox/.

const CHROMIUM = '/usr/bin/chromium';
const skipReason = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run does)`;
const artifacts = new URL('../../test-artifacts/sandbox/', import.meta.url).pathname;

describe.skipIf(skipReason)(
  `the sandbox in a browser${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let sandbox: Sandbox;
    let browser: Browser;
    let page: Page;
    let dir: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'sandbox-browser-'));
      mkdirSync(artifacts, { recursive: true });
      sandbox = await startSandbox(
        loadConfig({
          APP_MODE: 'sandbox',
          PORT: '0',
          DATABASE_URL: join(dir, 'approvals.db'),
          LOG_LEVEL: 'fatal',
        }),
        createLogger('fatal'),
      );
      browser = await chromium.launch({
        executablePath: CHROMIUM,
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
      page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await sandbox?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`) });

    it('starts an approval with /approve, shows the decision in the thread, and opens App Home', async () => {
      await page.goto(sandbox.url);
      await page.getByLabel('You are').selectOption({ label: 'Sam Taylor · en-US' });
      await expect.poll(() => page.locator('#title').textContent()).toBe('# general');
      await shot('1-channel');

      await page.getByLabel('Message', { exact: true }).fill('/approve New storage node');
      await page.getByLabel('Message', { exact: true }).press('Enter');
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await expect
        .poll(() => modal.getByText('Suggested approver: Maria Lopez').count(), { timeout: 10_000 })
        .toBe(1);
      await expect
        .poll(() => modal.getByLabel('Approver').inputValue())
        .toBe(sandbox.workspace.userByLogin('maria.lopez@corp.example').id);
      await expect.poll(() => modal.getByLabel('Title').inputValue()).toBe('New storage node');
      await shot('2-modal');

      // Submitting without a note shows Slack's field error.
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect.poll(() => modal.getByRole('alert').textContent()).toBe('Please fill this in.');
      await modal.getByLabel('Note').fill('Two more nodes for the Q3 expansion.');
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect
        .poll(
          () =>
            page
              .getByRole('dialog')
              .getByText(/Approval \S+ started/)
              .count(),
          { timeout: 10_000 },
        )
        .toBe(1);
      await shot('3-submitted');
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).first().click();

      const request = page
        .locator('#messages article')
        .filter({ hasText: 'Approval request: New storage node' });
      await expect.poll(() => request.count(), { timeout: 10_000 }).toBe(1);
      const djbh = sandbox.simulator.approvals()[0]?.djbh ?? '';
      expect(djbh).toMatch(/^[A-Za-z0-9]{11}[a-z]$/);

      const card = page.locator(`.approval[data-djbh="${djbh}"]`);
      await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
      await card.getByRole('button', { name: /Agree/ }).click();
      // The app finds the decision on its next poll (every 2 s in the sandbox).
      await expect
        .poll(() => request.getByRole('button', { name: '1 reply' }).count(), { timeout: 15_000 })
        .toBe(1);
      await expect.poll(() => request.textContent()).toContain('Approved · 同意');
      await request.getByRole('button', { name: '1 reply' }).click();
      await expect
        .poll(() => page.locator('#thread-messages').textContent())
        .toContain('Approved · 同意 by');
      await shot('4-thread');

      await page.locator('#apps button').first().click();
      await expect
        .poll(() => page.locator('#home').textContent(), { timeout: 10_000 })
        .toContain('My requests (1)');
      await expect.poll(() => page.locator('#home').textContent()).toContain(djbh);
      await shot('5-home');

      // The approver's side: her DM from the app links to the request's thread.
      await page.getByLabel('You are').selectOption({ label: 'Maria Lopez · en-US' });
      await page.locator('#apps button').first().click();
      await page.getByRole('tab', { name: 'Messages' }).click();
      const dm = page.locator('#messages article').filter({ hasText: 'asks for your approval' });
      await expect.poll(() => dm.count(), { timeout: 10_000 }).toBe(1);
      await dm.getByRole('link', { name: 'View request' }).click();
      await expect
        .poll(() => page.locator('#thread-messages').textContent())
        .toContain('Approved · 同意 by');
      await expect.poll(() => page.locator('#title').textContent()).toBe('# general');
      await shot('6-approver-dm-thread');
    }, 90_000);

    it('renders mrkdwn as text nodes, so nothing in a message becomes markup', async () => {
      await page.goto(sandbox.url);
      // As a string: the test runner would rewrite a dynamic import written here.
      const rendered = (await page.evaluate(`(async () => {
        const { mrkdwn } = await import('/sandbox/block-kit.js');
        const span = document.createElement('span');
        span.append(mrkdwn('*<https://x.example|<img src=x onerror=alert(1)>>* &lt;b&gt;hi&lt;/b&gt; \`<i>\`',
          { name: (id) => id, channelName: (id) => id }));
        return { text: span.textContent, elements: Array.from(span.querySelectorAll('*'), (e) => e.tagName.toLowerCase()) };
      })()`)) as { text: string; elements: string[] };
      expect(rendered.elements).not.toContain('img');
      expect(rendered.elements).not.toContain('b');
      expect(rendered.text).toContain('<b>hi</b>');
    });
  },
);
