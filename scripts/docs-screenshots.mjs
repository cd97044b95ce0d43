// `npm run docs:screenshots`: the pictures of docs/for-everyone.md (and .zh.md), taken from the
// sandbox. Starts the sandbox as `npm start` does (building first when the sources changed), on a
// scratch folder and a free port, once in English and once with APP_LANGUAGE=zh, drives its page
// in Debian's Chromium with playwright-core, and writes each picture, cropped to the element it
// shows, to docs/images/. Run it again after changing what people see; commit the PNGs.
//
// Needs Chromium (/usr/bin/chromium, or CHROMIUM=<path>) and fonts for Chinese and emoji
// (Debian's fonts-wqy-microhei and fonts-noto-color-emoji), else they show as empty boxes.
// `npm run docs:screenshots -- en` (or `zh`) takes one language's only.
//
// Not part of `npm test`: taking pictures proves nothing the browser test does not, and is slow.
// test/docs-links.test.ts checks that every picture the docs show exists and stays small.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = join(root, 'docs', 'images');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TIMEOUT = 20_000;

/** `npm start` with no Slack settings, on its own folder and port; resolves with its page's URL. */
function startSandbox(extraEnv) {
  const dir = mkdtempSync(join(tmpdir(), 'docs-screenshots-'));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(SLACK_|APPROVAL_|DATABASE_URL|ADMIN_|APP_MODE)/.test(name),
    ),
  );
  const child = spawn(process.execPath, [join(root, 'scripts', 'start.mjs')], {
    cwd: root,
    env: {
      ...env,
      SANDBOX_DATA_DIR: dir,
      PORT: '0',
      LOG_LEVEL: 'error',
      // No reminder in the pictures: they show a request just made.
      REMINDER_AFTER_HOURS: '24',
      REMINDER_INTERVAL_HOURS: '24',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((done) => child.once('exit', done));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const url = new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const m = /open (http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code}) before serving`)));
  });
  return { url, stop };
}

/** Polls `read` until it returns something truthy. */
async function until(read, what) {
  const end = Date.now() + TIMEOUT;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/**
 * A picture of one element, by its box on the page: the page re-renders its messages as they
 * change, so the element itself may be replaced between finding it and taking the picture.
 */
async function shot(locator, name) {
  const clip = await until(() => locator.boundingBox().catch(() => null), 'the element to show');
  await save(locator.page(), clip, name);
}

/** Writes the picture of `clip` to docs/images/<name>.png, and says how big it is. */
async function save(page, clip, name) {
  const path = join(out, `${name}.png`);
  await page.screenshot({ path, clip, animations: 'disabled' });
  process.stdout.write(`docs/images/${name}.png  ${Math.round(statSync(path).size / 1024)} KB\n`);
}

/** Today plus `days`, as the date picker takes it (YYYY-MM-DD). */
const inDays = (days) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** A picture of a locator's content only: its box, down to where its last child ends. */
async function shotContent(page, locator, name) {
  const clip = await locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    let bottom = box.top;
    for (const child of element.children)
      bottom = Math.max(bottom, child.getBoundingClientRect().bottom);
    const pad = Number.parseFloat(getComputedStyle(element).paddingBottom) || 16;
    return {
      x: box.left,
      y: box.top,
      width: box.width,
      height: Math.min(box.height, bottom - box.top + pad),
    };
  });
  await save(page, clip, name);
}

/**
 * One language's pictures: the form, `/approve list`, the approver's DM and Home, the decision in
 * the thread, and a delegate set on Home. In Chinese the people read Chinese and the workspace's
 * language is zh, so the channel's messages are in Chinese too.
 */
async function pictures(browser, lang) {
  const zh = lang === 'zh';
  const sandbox = startSandbox(zh ? { APP_LANGUAGE: 'zh' } : {});
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const suffix = zh ? '.zh' : '';
  const words = zh
    ? {
        requester: 'Han Xue',
        approver: 'Chen Hao',
        delegate: 'Li Wei',
        title: '新增两台存储节点',
        note: '第三季度扩容，预算已批。',
        approverLabel: '审批人',
        noteLabel: '说明',
        submit: '提交',
        close: /关闭|Close/,
        messages: /消息|Messages/,
        agree: /Agree|同意/,
        delegateTo: '把发给我的新申请转给',
        until: /截止日期/,
        setDelegate: '设置代理人',
        save: '保存',
      }
    : {
        requester: 'Sam Taylor',
        approver: 'Maria Lopez',
        delegate: 'Alex Kim',
        title: 'Two more storage nodes',
        note: 'For the Q3 expansion; the budget is approved.',
        approverLabel: 'Approver',
        noteLabel: 'Note',
        submit: 'Submit',
        close: 'Close',
        messages: 'Messages',
        agree: /Agree/,
        delegateTo: 'Send new requests for me to',
        until: /Until/,
        setDelegate: 'Set a delegate',
        save: 'Save',
      };
  try {
    const url = await sandbox.url;
    const beAs = async (name) => {
      await page.goto(url);
      await page.locator('body[data-ready="true"]').waitFor();
      const option = page.locator('#who option').filter({ hasText: name }).first();
      await page.getByLabel('You are').selectOption({ label: (await option.textContent()) ?? '' });
    };
    const type = async (text) => {
      const box = page.getByLabel('Message', { exact: true });
      await box.fill(text);
      await box.press('Enter');
      await until(async () => (await box.inputValue()) === '', 'the composer to empty');
    };
    const openHome = async () => {
      await page.locator('#apps button').first().click();
      await until(
        async () => ((await page.locator('#home').textContent()) ?? '').length > 50,
        'Home',
      );
    };
    const homeSays = (pattern) =>
      until(
        async () => pattern.test((await page.locator('#home').textContent()) ?? ''),
        `Home to say ${pattern}`,
      );

    // Asking: /approve opens the form with the approver already suggested.
    await beAs(words.requester);
    await type(`/approve ${words.title}`);
    const modal = page.getByRole('dialog');
    await until(
      async () => (await modal.getByLabel(words.approverLabel).inputValue()) !== '',
      'the suggested approver',
    );
    // The suggestion's reason (leader, away, delegate) comes with a second update of the form.
    await page.waitForTimeout(1_500);
    await modal.getByLabel(words.noteLabel).fill(words.note);
    await shot(modal, `ask-form${suffix}`);
    await modal.getByRole('button', { name: words.submit }).click();
    const close = modal.getByRole('button', { name: words.close }).first();
    await close.waitFor({ timeout: TIMEOUT });
    await close.click();
    const request = page.locator('#messages article').filter({ hasText: words.title }).first();
    await request.waitFor({ timeout: TIMEOUT });

    // Where to look: /approve list, only for you.
    await type('/approve list');
    // The page marks a message only its reader sees, as Slack does.
    const list = page
      .locator('#messages article')
      .filter({ hasText: 'Only visible to you' })
      .filter({ hasText: words.title })
      .last();
    await shot(list, `list${suffix}`);

    // Deciding: the approver's DM and Home lead to the approval service.
    await beAs(words.approver);
    await openHome();
    await homeSays(new RegExp(words.title));
    await shotContent(page, page.locator('#home'), `home${suffix}`);
    await page.getByRole('tab', { name: words.messages }).click();
    const dm = page.locator('#messages article').filter({ hasText: words.title }).first();
    await dm.waitFor({ timeout: TIMEOUT });
    await shot(dm, `decide-dm${suffix}`);

    // Away for a while: a delegate, set on Home while the request still waits (it stays with them).
    await openHome();
    await page.locator('#home').getByRole('button', { name: words.setDelegate }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel(words.delegateTo).waitFor({ timeout: TIMEOUT });
    await form.getByLabel(words.delegateTo).selectOption({ label: words.delegate });
    await form.getByLabel(words.until).fill(inDays(10));
    await form.getByLabel(words.until).blur();
    await shot(form, `delegate-form${suffix}`);
    await form.getByRole('button', { name: words.save }).click();
    await homeSays(new RegExp(words.delegate));
    await shotContent(page, page.locator('#home'), `delegate-home${suffix}`);

    // The decision, made in the service (the sandbox's panel plays it), arrives in the thread.
    const card = page.locator('.approval').filter({ hasText: words.title }).first();
    await card.waitFor({ timeout: TIMEOUT });
    await card.getByRole('button', { name: words.agree }).first().click();

    await beAs(words.requester);
    await page.locator('#channels button', { hasText: 'general' }).click();
    const replies = request.getByRole('button', { name: /reply|回复/ });
    await replies.waitFor({ timeout: TIMEOUT });
    await replies.click();
    await until(
      async () => (await page.locator('#thread-messages article').count()) >= 2,
      'the decision in the thread',
    );
    await shot(page.locator('#thread'), `thread${suffix}`);
  } finally {
    await page.close();
    await sandbox.stop();
  }
}

mkdirSync(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync'],
});
try {
  for (const lang of process.argv.slice(2).length ? process.argv.slice(2) : ['en', 'zh'])
    await pictures(browser, lang);
} finally {
  await browser.close();
}
