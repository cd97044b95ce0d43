import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/harness.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/test-sandbox.ts';

// Trying the admin's mapping without a workspace: the sandbox with ACCOUNT_LINKING=admin, its
// page's calls, and `npm run accounts` run on the sandbox's own database while it runs.

const root = new URL('../..', import.meta.url).pathname;
const exec = promisify(execFile);
let page: TestSandbox;

beforeAll(async () => {
  page = await startTestSandbox({}, { ACCOUNT_LINKING: 'admin' });
});
afterAll(() => page?.close());

describe('the sandbox with ACCOUNT_LINKING=admin', { timeout: 240_000 }, () => {
  it('tells Sam T what to send an admin, and an admin’s `npm run accounts -- add` makes the form suggest his leader', async () => {
    const { sandbox } = page;
    const samT = sandbox.workspace.userByLogin('sam@personal.example').id;
    const general = sandbox.workspace.channelByName('general').id;
    const say = (text: string) =>
      page.post('/sandbox/api/message', { user: samT, channel: general, text });
    const form = async () => {
      const opened = (await page.state(samT)).views.length;
      await say('/approve Laptop');
      return waitFor(
        async () => {
          const views = (await page.state(samT)).views;
          const view = views.length > opened ? JSON.stringify(views.at(-1)) : '';
          return /Suggested approver|does not know/.test(view) ? view : undefined;
        },
        8000,
        'the filled-in form',
      );
    };

    await say('/approve link');
    const told = await waitFor(async () =>
      (await page.state(samT)).messages.find((m) => m.ephemeral && m.text.includes('member ID')),
    );
    expect(told.text).toContain(`npm run accounts -- add ${samT} <your login>`);
    expect(await form()).toContain('does not know sam@personal.example');

    const added = await exec(
      process.execPath,
      ['--import', 'tsx', 'src/operator/accounts-cli.ts', 'add', samT, 'sam.taylor@corp.example'],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: join(page.dir, 'sandbox.db') },
      },
    );
    expect(added.stdout).toBe(`${samT} is now linked to sam.taylor@corp.example\n`);
    expect(await form()).toContain('Suggested approver: Maria Lopez');
  });
});
