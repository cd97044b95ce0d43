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
          SANDBOX_DATA_DIR: dir,
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

    /** Who is on the page: the first person whose label starts with `name`. */
    async function beAs(name: string) {
      await page.goto(sandbox.url);
      await page.locator('body[data-ready="true"]').waitFor();
      const option = page.locator('#who option').filter({ hasText: name });
      await page.getByLabel('You are').selectOption({ label: (await option.textContent()) ?? '' });
    }

    async function type(text: string) {
      const box = page.getByLabel('Message', { exact: true });
      await box.fill(text);
      await box.press('Enter');
      await expect.poll(() => box.inputValue()).toBe('');
    }

    /** Types a command that opens the form, waits for it to be filled in, and writes the note. */
    async function openForm(command: string, note: string) {
      await type(command);
      const modal = page.getByRole('dialog');
      await expect
        .poll(() => modal.getByText('Suggested approver: Maria Lopez').count(), { timeout: 10_000 })
        .toBe(1);
      await modal.getByLabel('Note').fill(note);
      return modal;
    }

    /** The box of an element, or null when it is not laid out. */
    const box = (selector: string) => page.locator(selector).last().boundingBox();
    const viewport = { width: 1440, height: 900 };
    const inView = (b: { x: number; y: number; width: number; height: number } | null) =>
      b !== null && b.height > 0 && b.y >= 0 && b.y + b.height <= viewport.height;

    it('starts an approval with /approve, shows the decision in the thread, and opens App Home', async () => {
      await beAs('Sam Taylor');
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
      // Labelled with her language and her local time in her zone ("Maria Lopez · en-US · Shanghai …").
      const maria = page
        .locator('#who option')
        .filter({ hasText: 'Maria Lopez · en-US · Shanghai' });
      await page.getByLabel('You are').selectOption({ label: (await maria.textContent()) ?? '' });
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

    it('keeps the header, the composer and the latest message in view in a long channel, with a thread and the service panel side by side', async () => {
      await beAs('Sam Taylor');
      await page.locator('#channels button', { hasText: 'general' }).click();
      for (let i = 1; i <= 20; i++) await type(`Status line ${i} of the storage migration`);
      const last = page.locator('#messages article').filter({ hasText: 'Status line 20 of' });
      await expect.poll(() => last.count()).toBe(1);

      const checkLayout = async ({ latestInView = true } = {}) => {
        // The page itself does not scroll; the message list does.
        expect(
          await page.evaluate(() => document.scrollingElement?.scrollHeight ?? 0),
        ).toBeLessThanOrEqual(viewport.height);
        expect(inView(await box('#title'))).toBe(true);
        expect(inView(await box('#who'))).toBe(true);
        expect(inView(await box('#composer-input'))).toBe(true);
        if (!latestInView) return;
        const list = await box('#messages');
        const latest = await last.boundingBox();
        expect(latest && list && latest.y + latest.height <= list.y + list.height + 1).toBe(true);
        expect(latest && list && latest.y >= list.y).toBe(true);
      };
      await expect.poll(async () => inView(await last.boundingBox())).toBe(true);
      await checkLayout();
      await shot('7-long-channel');

      // A channel opens at its latest message, after a reload too.
      await page.reload();
      await page.locator('body[data-ready="true"]').waitFor();
      await expect.poll(async () => inView(await last.boundingBox())).toBe(true);
      await checkLayout();

      // A thread opens beside the channel; the approval service panel stays in view below it.
      const first = page.locator('#messages article').filter({ hasText: 'Status line 1 of' });
      const ts = (await first.getAttribute('data-ts')) ?? '';
      const sam = sandbox.workspace.userByLogin('sam.taylor@corp.example').id;
      const general = sandbox.workspace.channelByName('general').id;
      sandbox.workspace.postAsUser(sam, general, 'Moved to Tuesday.', ts);
      await first.getByRole('button', { name: '1 reply' }).click();
      await expect.poll(async () => inView(await box('#thread-input'))).toBe(true);
      expect(inView(await box('#service h2'))).toBe(true);
      // Scrolled up to the first message to open its thread: the list stays where the person put it.
      await checkLayout({ latestInView: false });
      await shot('7b-thread-and-service');
    }, 60_000);

    it('submits the form once when Submit is double-clicked, and shows the confirmation', async () => {
      const failures: string[] = [];
      page.on('response', (r) => {
        if (r.status() >= 500) failures.push(`${r.status()} ${r.url()}`);
      });
      await beAs('Sam Taylor');
      const modal = await openForm('/approve Double-clicked request', 'Clicked twice in a hurry.');
      await modal.getByRole('button', { name: 'Submit' }).dblclick();
      await expect
        .poll(() => modal.getByText(/Approval \S+ started/).count(), { timeout: 10_000 })
        .toBe(1);
      expect(
        sandbox.simulator.approvals().filter((a) => a.title === 'Double-clicked request'),
      ).toHaveLength(1);
      expect(failures).toEqual([]);
      await shot('8-double-click');

      // The service panel's two decisions are the same size; the page has its icon.
      const card = page.locator('.approval').filter({ hasText: 'Double-clicked request' });
      const agree = await card.getByRole('button', { name: 'Agree' }).boundingBox();
      const refuse = await card.getByRole('button', { name: 'Refuse' }).boundingBox();
      expect(agree && refuse && [agree.width, agree.height]).toEqual(
        refuse && [refuse.width, refuse.height],
      );
      const icon = await page.evaluate(async () => {
        const href = document.querySelector<HTMLLinkElement>('link[rel="icon"]')?.href ?? '';
        const r = await fetch(href);
        return `${r.status} ${r.headers.get('content-type')}`;
      });
      expect(icon).toBe('200 image/svg+xml; charset=utf-8');
    }, 60_000);

    it('says in the form that the nearest leader is away and suggests the next one up, and re-checks a pick', async () => {
      await beAs('Tom Baker');
      await type('/approve Firewall change');
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await expect
        .poll(() => modal.getByText(/Olivia Brown is away until .+ Vacation/).count(), {
          timeout: 10_000,
        })
        .toBe(1);
      await expect
        .poll(() => modal.getByLabel('Approver').inputValue())
        .toBe(sandbox.workspace.userByLogin('chen.hao@corp.example').id);
      await expect(modal.getByText(/Suggested instead: Chen Hao/).count()).resolves.toBe(1);
      await shot('9-away-suggestion');

      // Picking the one who is away anyway: the form says so again, and keeps the note.
      await modal.getByLabel('Note').fill('Open 443 to the new nodes.');
      await modal
        .getByLabel('Approver')
        .selectOption(sandbox.workspace.userByLogin('olivia.brown@corp.example').id);
      await expect
        .poll(() => modal.getByText(/The next leader up is Chen Hao/).count(), { timeout: 10_000 })
        .toBe(1);
      await expect
        .poll(() => modal.getByLabel('Note').inputValue())
        .toBe('Open 443 to the new nodes.');
      // A deactivated account is named as such.
      await modal
        .getByLabel('Approver')
        .selectOption(sandbox.workspace.userByLogin('gao.yu@corp.example').id);
      await expect
        .poll(() => modal.getByText(/Gao Yu’s Slack account is deactivated/).count(), {
          timeout: 10_000,
        })
        .toBe(1);
      await shot('10-away-pick');
      await modal.getByRole('button', { name: 'Cancel' }).click();
    }, 60_000);

    it('fills the form from a #general template and names it on the request; /approve templates lists them and adds one', async () => {
      await beAs('Sam Taylor');
      await type('/approve Two monitors');
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await expect
        .poll(() => modal.getByText('Suggested approver: Maria Lopez').count(), { timeout: 10_000 })
        .toBe(1);
      // The sandbox starts #general with three templates, the Chinese one among them.
      const picker = modal.getByLabel('Template');
      await expect
        .poll(() => picker.locator('option').allTextContents())
        .toEqual([
          'Start from a template…',
          'Access request',
          'Equipment (two steps)',
          'Purchase',
          '请假',
        ]);
      await picker.selectOption({ label: 'Purchase' });
      await expect
        .poll(() => modal.getByLabel('Title').inputValue(), { timeout: 10_000 })
        .toBe('[Purchase] Two monitors');
      await expect.poll(() => modal.getByLabel('Note').inputValue()).toContain('Item:\nSupplier:');
      await expect
        .poll(() => modal.getByLabel('Approver').inputValue())
        .toBe(sandbox.workspace.userByLogin('chen.hao@corp.example').id);
      await expect(modal.getByText('Filled in from the template Purchase.').count()).resolves.toBe(
        1,
      );
      await modal.getByLabel('Note').fill('Item: two 27" monitors\nCost (incl. tax): 640 EUR');
      await shot('12-template-picked');
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect
        .poll(() => modal.getByText(/Approval \S+ started/).count(), { timeout: 10_000 })
        .toBe(1);
      await modal.getByRole('button', { name: 'Close' }).first().click();
      const request = page
        .locator('#messages article')
        .filter({ hasText: 'Approval request: [Purchase] Two monitors' });
      await expect
        .poll(() => request.getByText('From template Purchase').count(), { timeout: 10_000 })
        .toBe(1);

      // The channel's templates, with who added them; Add opens the editor, Save lists it.
      await type('/approve templates');
      const templates = page.getByRole('dialog', { name: 'Request templates' });
      await expect
        .poll(() => templates.getByText(/4 of at most 20/).count(), { timeout: 10_000 })
        .toBe(1);
      await expect(templates.getByText(/Added by @Maria Lopez/).count()).resolves.toBe(1);
      await shot('13-templates');
      await templates.getByRole('button', { name: 'Add a template' }).click();
      const editor = page.getByRole('dialog', { name: 'New template' });
      await editor.getByLabel('Name').fill('Travel');
      await editor.getByLabel('Title prefix').fill('[Travel]');
      await editor.getByLabel('Note skeleton').fill('Where:\nWhen:\nBudget:');
      await editor.getByRole('button', { name: 'Save' }).click();
      await expect
        .poll(() => templates.getByText(/5 of at most 20/).count(), { timeout: 10_000 })
        .toBe(1);
      await expect(templates.getByText(/Sam Taylor added Travel/).count()).resolves.toBe(1);
      await templates.getByRole('button', { name: 'Close' }).first().click();
    }, 60_000);

    it('requests a rejected approval again from its message, with the form prefilled', async () => {
      await beAs('Sam Taylor');
      const modal = await openForm('/approve Rack for the lab', 'Two racks, 42U.');
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect
        .poll(() => modal.getByText(/Approval \S+ started/).count(), { timeout: 10_000 })
        .toBe(1);
      await modal.getByRole('button', { name: 'Close' }).first().click();
      const djbh =
        sandbox.simulator.approvals().find((a) => a.title === 'Rack for the lab')?.djbh ?? '';
      await page
        .locator(`.approval[data-djbh="${djbh}"]`)
        .getByRole('button', { name: /Refuse/ })
        .click();
      const request = page
        .locator('#messages article')
        .filter({ hasText: 'Approval request: Rack for the lab' });
      await expect
        .poll(() => request.getByRole('button', { name: 'Request again' }).count(), {
          timeout: 15_000,
        })
        .toBe(1);
      await request.getByRole('button', { name: 'Request again' }).click();
      const again = page.getByRole('dialog', { name: 'Request approval' });
      await expect
        .poll(() => again.getByText('Suggested approver: Maria Lopez').count(), { timeout: 10_000 })
        .toBe(1);
      await expect.poll(() => again.getByLabel('Title').inputValue()).toBe('Rack for the lab');
      await expect.poll(() => again.getByLabel('Note').inputValue()).toBe('Two racks, 42U.');
      await shot('11-request-again');
      await again.getByRole('button', { name: 'Cancel' }).click();

      // Someone else pressing it is told, only them, who may; nothing opens.
      await beAs('Maria Lopez');
      const seen = page
        .locator('#messages article')
        .filter({ hasText: 'Approval request: Rack for the lab' });
      await seen.getByRole('button', { name: 'Request again' }).click();
      await expect
        .poll(
          () =>
            page
              .locator('#messages article.ephemeral')
              .filter({ hasText: 'who requested it, can request it again' })
              .count(),
          { timeout: 10_000 },
        )
        .toBe(1);
      expect(await page.getByRole('dialog').count()).toBe(0);
      await shot('11b-request-again-not-yours');
    }, 60_000);

    it('leads the approver from the DM to their list in the approval service, the new approval on top', async () => {
      await beAs('Sam Taylor');
      for (const title of ['Older rack', 'Newest rack']) {
        const modal = await openForm(`/approve ${title}`, 'For the lab.');
        await modal.getByRole('button', { name: 'Submit' }).click();
        await expect
          .poll(() => modal.getByText(/Approval \S+ started/).count(), { timeout: 10_000 })
          .toBe(1);
        await modal.getByRole('button', { name: 'Close' }).first().click();
      }
      const djbh = sandbox.simulator.approvals().find((a) => a.title === 'Newest rack')?.djbh ?? '';

      const maria = page.locator('#who option').filter({ hasText: 'Maria Lopez · en-US' });
      await page.getByLabel('You are').selectOption({ label: (await maria.textContent()) ?? '' });
      await page.locator('#apps button').first().click();
      await page.getByRole('tab', { name: 'Messages' }).click();
      const dm = page.locator('#messages article').filter({ hasText: 'Newest rack' });
      await expect.poll(() => dm.count(), { timeout: 10_000 }).toBe(1);
      // The DM says which row to look for: the service has no page for one approval.
      await expect.poll(() => dm.textContent()).toContain(`decide the one numbered ${djbh}`);
      const [service] = await Promise.all([
        page.context().waitForEvent('page'),
        dm.getByRole('link', { name: 'Open in approval service' }).click(),
      ]);
      await service.waitForLoadState();
      expect(new URL(service.url()).hash).toBe('#/approval/4000000000');
      // Not signed in to the service yet: it asks, then shows the list the link named.
      await service.getByRole('combobox').selectOption('maria.lopez@corp.example');
      await service.getByRole('button', { name: 'Sign in' }).click();
      const first = service.locator('#approvals tbody tr').first();
      await expect.poll(() => first.getAttribute('data-taskuuid'), { timeout: 10_000 }).toBe(djbh);
      await expect.poll(() => first.textContent()).toContain('Newest rack');
      await service.screenshot({ path: join(artifacts, '11b-service-list.png') });
      await service.close();
    }, 60_000);

    it('answers an unknown command as Slackbot, adds the app to a channel with /invite, and forgets forms and ephemeral messages on reload', async () => {
      await beAs('Sam Taylor');
      const random = page.locator('#channels button', { hasText: 'random' });
      await expect.poll(() => random.textContent()).toContain('app not in channel');
      await random.click();
      await expect.poll(() => page.locator('#title').textContent()).toBe('# random');

      await type('/frobnicate now');
      const slackbot = page.locator('#messages article').filter({ hasText: 'Slackbot' });
      await expect.poll(() => slackbot.textContent()).toContain('is not a valid command');
      await expect.poll(() => slackbot.textContent()).toContain('Only visible to you');
      expect(await page.locator('#messages article .app-tag').count()).toBe(0);

      await type('/invite @Approvals');
      await expect
        .poll(() => page.locator('#messages').textContent())
        .toContain('@Approvals has joined the channel');
      await expect.poll(() => random.textContent()).not.toContain('app not in channel');

      const modal = await openForm('/approve Monitors for the NOC', 'Two 27-inch monitors.');
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect
        .poll(() => modal.getByText(/posted in #random/).count(), { timeout: 10_000 })
        .toBe(1);
      await modal.getByRole('button', { name: 'Close' }).first().click();
      await expect
        .poll(
          () =>
            page
              .locator('#messages article')
              .filter({ hasText: 'Approval request: Monitors for the NOC' })
              .count(),
          { timeout: 10_000 },
        )
        .toBe(1);
      await shot('9-invite');

      // An open form and an answer only Sam saw do not survive a reload, as in Slack.
      await type('/approve Left open');
      await expect.poll(() => page.getByRole('dialog').count(), { timeout: 10_000 }).toBe(1);
      await page.reload();
      await page.locator('body[data-ready="true"]').waitFor();
      await page.locator('#channels button', { hasText: 'random' }).click();
      await expect.poll(() => page.locator('#title').textContent()).toBe('# random');
      expect(await page.getByRole('dialog').count()).toBe(0);
      expect(await page.locator('#messages article.ephemeral').count()).toBe(0);
      const sam = sandbox.workspace.userByLogin('sam.taylor@corp.example').id;
      expect([...sandbox.workspace.views.values()].filter((v) => v.user === sam)).toEqual([]);
    }, 60_000);

    it('shows the form in Chinese to a zh-CN person, draws emoji in the header, and keeps a too-long title whole', async () => {
      await beAs('Li Wei');
      await type('/approve :pizza: 团队午餐');
      const modal = page.getByRole('dialog', { name: '发起审批' });
      await expect.poll(() => modal.getByText('建议审批人').count(), { timeout: 10_000 }).toBe(1);
      expect(await modal.getByLabel('标题').inputValue()).toBe(':pizza: 团队午餐');
      expect(await modal.getByLabel('审批人').locator('option').first().textContent()).toBe(
        '选择一个人…',
      );
      expect(await modal.getByRole('button', { name: '提交' }).count()).toBe(1);
      await shot('10-chinese-form');
      await modal.getByLabel('说明').fill('周五的团队午餐。');
      await modal.getByRole('button', { name: '提交' }).click();
      await expect.poll(() => modal.getByText(/已发起/).count(), { timeout: 10_000 }).toBe(1);
      await modal.getByRole('button', { name: '关闭' }).first().click();
      // The channel reads the workspace's language (English here); Slack draws :pizza: as 🍕.
      const header = page
        .locator('#messages article .bk-header')
        .filter({ hasText: 'Approval request: 🍕 团队午餐' });
      await expect.poll(() => header.count(), { timeout: 10_000 }).toBe(1);
      expect(await page.locator('#messages').textContent()).not.toContain(':pizza:');

      const long = `${'机架'.repeat(100)}X`;
      await type(`/approve ${long}`);
      const form = page.getByRole('dialog', { name: '发起审批' });
      await expect.poll(() => form.getByLabel('标题').inputValue(), { timeout: 10_000 }).toBe(long);
      await expect
        .poll(() => form.locator('[data-block="title"] .hint').textContent())
        .toContain('共 201 个字符');
      await form.getByLabel('说明').fill('太长的标题。');
      await form.getByRole('button', { name: '提交' }).click();
      await expect
        .poll(() => form.locator('[data-block="title"] [role="alert"]').textContent())
        .toContain('201');
      await shot('11-long-title');
    }, 60_000);

    it('requests approval of a message from its "⋯" menu, into its thread, and offers the form from the ⚡ menu', async () => {
      await beAs('Sam Taylor');
      await page.locator('#channels button', { hasText: 'general' }).click();
      await type('Order 3 spare disks for the backup array');
      const message = page
        .locator('#messages article')
        .filter({ hasText: 'Order 3 spare disks for the backup array' })
        .last();
      await message.hover();
      await message.getByRole('button', { name: 'More actions' }).click();
      await message.getByRole('menuitem', { name: 'Request approval' }).click();
      const modal = page.getByRole('dialog', { name: 'Request approval' });
      await expect
        .poll(() => modal.getByText('Suggested approver: Maria Lopez').count(), { timeout: 10_000 })
        .toBe(1);
      expect(await modal.getByLabel('Title').inputValue()).toBe(
        'Order 3 spare disks for the backup array',
      );
      expect(await modal.getByLabel('Note').inputValue()).toMatch(
        /^Order 3 spare disks for the backup array\n\nhttps:\/\/sandbox\.slack\.local\/archives\//,
      );
      await shot('12-message-shortcut');
      await modal.getByRole('button', { name: 'Submit' }).click();
      await expect
        .poll(() => modal.getByText(/posted in the message's thread/).count(), { timeout: 10_000 })
        .toBe(1);
      await modal.getByRole('button', { name: 'Close' }).first().click();
      await message.getByRole('button', { name: '1 reply' }).click();
      await expect
        .poll(() => page.locator('#thread-messages').textContent(), { timeout: 10_000 })
        .toContain('Approval request: Order 3 spare disks for the backup array');

      await page.getByRole('button', { name: 'Shortcuts' }).click();
      await page.getByRole('menuitem', { name: 'Request approval' }).click();
      const form = page.getByRole('dialog', { name: 'Request approval' });
      await expect.poll(() => form.getByLabel('Post in').count(), { timeout: 10_000 }).toBe(1);
      await form.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    }, 60_000);

    it('runs the workflow step from the "Run workflow" panel and shows its outputs once the approval is decided', async () => {
      await beAs('Sam Taylor');
      await page.getByRole('button', { name: 'Run workflow' }).click();
      const panel = page.getByRole('dialog', { name: 'Run workflow' });
      await panel.getByLabel('Title').fill('Conference travel');
      await panel.getByLabel('Note').fill('KubeCon, three days.');
      await panel.getByLabel('Post in (optional)').selectOption({ label: '# general' });
      await panel.getByRole('button', { name: 'Run' }).click();
      // Sam ran it himself: he is shown what will start, in a modal, and starts it there.
      const confirm = page.getByRole('dialog', { name: 'Start this approval?' });
      await expect.poll(() => confirm.count(), { timeout: 10_000 }).toBe(1);
      await confirm.getByRole('button', { name: 'Start' }).click();
      const run = panel.locator('.run').filter({ hasText: 'Conference travel' });
      await expect.poll(() => run.getAttribute('data-state'), { timeout: 10_000 }).toBe('running');
      await expect
        .poll(() => sandbox.simulator.approvals().some((a) => a.title === 'Conference travel'), {
          timeout: 10_000,
        })
        .toBe(true);
      const djbh =
        sandbox.simulator.approvals().find((a) => a.title === 'Conference travel')?.djbh ?? '';
      // The approver decides in the service; the app's next poll ends the step.
      await panel.getByRole('button', { name: 'Close' }).first().click();
      const card = page.locator(`.approval[data-djbh="${djbh}"]`);
      await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
      await card.getByRole('button', { name: 'Agree' }).click();
      await page.getByRole('button', { name: 'Run workflow' }).click();
      await expect
        .poll(() => run.getAttribute('data-state'), { timeout: 15_000 })
        .toBe('completed');
      const outputs = await run.locator('.outputs').textContent();
      expect(outputs).toContain(`approval_number${djbh}`);
      expect(outputs).toContain('decisionapproved');
      expect(outputs).toContain('decided_byMaria Lopez');
      await shot('13-workflow');
      await panel.getByRole('button', { name: 'Close' }).first().click();
    }, 60_000);

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
