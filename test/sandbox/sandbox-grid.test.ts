import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/sandbox.ts';
import { waitFor } from '../helpers/harness.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/test-sandbox.ts';

// The sandbox playing an Enterprise Grid organization with the app installed org-wide: its people
// have W… ids, and the page's calls work for them as for anyone.

let page: TestSandbox;
let sandbox: Sandbox;

beforeAll(async () => {
  page = await startTestSandbox({
    enterprise: { id: 'E0GRID', name: 'Globular Construct', orgWideInstall: true },
  });
  sandbox = page.sandbox;
});
afterAll(async () => {
  await page?.close();
});

describe('the sandbox as an Enterprise Grid organization', () => {
  it('lets a W… member type /approve, fill in the form and start an approval', async () => {
    const alex = sandbox.workspace.userByLogin('alex.kim@corp.example').id;
    expect(alex).toMatch(/^W/);
    await page.post('/sandbox/api/message', {
      user: alex,
      channel: sandbox.workspace.channelByName('general').id,
      text: '/approve Grid monitor',
    });
    const view = await waitFor(async () =>
      (await page.state(alex)).views.find((v) =>
        JSON.stringify(v.view).includes('Suggested approver'),
      ),
    );
    const result = await page.post(`/sandbox/api/views/${view.id}/submit`, {
      values: { title_input: 'Grid monitor', note_input: 'A second screen' },
    });
    expect(result).toEqual({ ok: true, errors: null });
    const approval = await waitFor(() =>
      sandbox.simulator.approvals().find((a) => a.title === 'Grid monitor'),
    );
    // The request in the channel, and the approver (a W… member too) told in their DM.
    const general = sandbox.workspace.channelByName('general').id;
    await waitFor(() =>
      sandbox.workspace.history(general).find((m) => m.text.includes(approval.djbh)),
    );
    const approverDm = sandbox.workspace.appDm(
      sandbox.workspace.userByLogin(approval.approver).id,
    ).id;
    await waitFor(
      () => sandbox.workspace.history(approverDm).find((m) => m.text.includes(approval.djbh)),
      5000,
      'the approver DM',
    );
  });
});
