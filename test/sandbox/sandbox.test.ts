import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/sandbox.ts';
import { waitFor } from '../helpers/harness.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/test-sandbox.ts';

// The sandbox server without a browser: the page's own calls, answered by the real app.

let page: TestSandbox;
let sandbox: Sandbox;

beforeAll(async () => {
  page = await startTestSandbox();
  sandbox = page.sandbox;
});
afterAll(async () => {
  await page?.close();
});

const post = (path: string, body: unknown) => page.post(path, body);
const state = (user: string) => page.state(user);

describe('the sandbox server', () => {
  it('takes the page’s calls only as JSON, from its own origin, addressed to this machine', async () => {
    const sam = sandbox.workspace.userByLogin('sam.taylor@corp.example').id;
    const general = sandbox.workspace.channelByName('general').id;
    const body = JSON.stringify({ user: sam, channel: general, text: 'hello' });
    const asForm = await fetch(`${sandbox.url}/sandbox/api/message`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body,
    });
    expect(asForm.status).toBe(403);
    const crossSite = await fetch(`${sandbox.url}/sandbox/api/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body,
    });
    expect(crossSite.status).toBe(403);
    const rebound = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${sandbox.url}/simulator/api/approvals/x/decision`);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { host: 'attacker.example', 'content-type': 'application/json' },
        },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.on('error', reject);
      req.end('{"decision":"agree"}');
    });
    expect(rebound).toBe(403);
    expect(sandbox.workspace.messages.some((m) => m.text === 'hello')).toBe(false);
  });

  it('serves the page and its scripts', async () => {
    const page = await fetch(sandbox.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/sandbox/app.js');
    for (const asset of ['/sandbox/app.js', '/sandbox/block-kit.js', '/sandbox/styles.css']) {
      expect((await fetch(`${sandbox.url}${asset}`)).status).toBe(200);
    }
  });

  it('shows the answer to /approve help only to the person who typed it', async () => {
    const sam = sandbox.workspace.userByLogin('sam.taylor@corp.example').id;
    const general = sandbox.workspace.channelByName('general').id;
    await post('/sandbox/api/message', { user: sam, channel: general, text: '/approve help' });
    const mine = await state(sam);
    expect(
      mine.messages.find((m) => m.ephemeral && m.text.includes('/approve status')),
    ).toBeDefined();
    const maria = await state(sandbox.workspace.userByLogin('maria.lopez@corp.example').id);
    expect(maria.messages.some((m) => m.text.includes('/approve status'))).toBe(false);
  });

  it('answers a command the workspace does not have as Slackbot, only to the person', async () => {
    const sam = sandbox.workspace.userByLogin('sam.taylor@corp.example').id;
    await post('/sandbox/api/message', {
      user: sam,
      channel: sandbox.workspace.channelByName('general').id,
      text: '/weather',
    });
    const answer = (await state(sam)).messages.find((m) => m.text.includes('/weather'));
    expect(answer).toMatchObject({ user: 'USLACKBOT', ephemeral: true });
    expect(answer?.text).toContain('is not a valid command');
  });

  it('adds the app to a channel with /invite, and says who is in already', async () => {
    const sam = sandbox.workspace.userByLogin('sam.taylor@corp.example').id;
    const random = sandbox.workspace.channelByName('random');
    const say = (text: string) =>
      post('/sandbox/api/message', { user: sam, channel: random.id, text });
    expect(random.members.has(sandbox.workspace.botUserId)).toBe(false);
    await say('/invite @Approvals');
    expect(random.members.has(sandbox.workspace.botUserId)).toBe(true);
    expect(sandbox.workspace.history(random.id).at(-1)?.text).toContain('has joined the channel');
    await say('/invite @approvals');
    expect((await state(sam)).messages.at(-1)?.text).toContain('is already in');
    await say('/invite @nobody');
    expect((await state(sam)).messages.at(-1)?.text).toContain('No one called @nobody');
  });

  it('forgets a reloaded client’s open forms and ephemeral messages, and refuses a second submit', async () => {
    const priya = sandbox.workspace.userByLogin('priya.nair@corp.example').id;
    const general = sandbox.workspace.channelByName('general').id;
    await post('/sandbox/api/message', { user: priya, channel: general, text: '/approve help' });
    await post('/sandbox/api/message', { user: priya, channel: general, text: '/approve Desk' });
    const view = await waitFor(async () => (await state(priya)).views[0]);
    expect((await state(priya)).messages.some((m) => m.ephemeral)).toBe(true);
    await post('/sandbox/api/session', { user: priya });
    const after = await state(priya);
    expect(after.views).toEqual([]);
    expect(after.messages.some((m) => m.ephemeral)).toBe(false);
    const late = await fetch(`${sandbox.url}/sandbox/api/views/${view.id}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ values: {} }),
    });
    expect(late.status).toBe(409);
    expect(await late.json()).toEqual({ ok: false, error: 'This form is no longer open.' });
  });

  it('opens the app’s modal, submits it and shows the approval in the service panel', async () => {
    const alex = sandbox.workspace.userByLogin('alex.kim@corp.example').id;
    await post('/sandbox/api/message', {
      user: alex,
      channel: sandbox.workspace.channelByName('general').id,
      text: '/approve Monitor',
    });
    const view = await waitFor(async () =>
      (await state(alex)).views.find((v) => JSON.stringify(v.view).includes('Suggested approver')),
    );
    const result = await post(`/sandbox/api/views/${view.id}/submit`, {
      values: { title_input: 'Monitor', note_input: 'A second screen' },
    });
    expect(result).toEqual({ ok: true, errors: null });
    const approvals = await waitFor(async () => {
      const list = (await fetch(`${sandbox.url}/simulator/api/approvals`).then((r) =>
        r.json(),
      )) as { approvals: Array<{ title: string; approver: string }> };
      return list.approvals.find((a) => a.title === 'Monitor');
    });
    expect(approvals.approver).toBe('liu.yang@corp.example');
  });
  it('talks to its own simulator directly, whatever proxy a .env copied from production names', async () => {
    // A proxy nobody listens at: a call sent there fails, and the form would say the service
    // cannot be reached instead of suggesting an approver.
    const proxied = await startTestSandbox({}, { HTTP_PROXY: 'http://127.0.0.1:9' });
    try {
      const alex = proxied.sandbox.workspace.userByLogin('alex.kim@corp.example').id;
      await proxied.post('/sandbox/api/message', {
        user: alex,
        channel: proxied.sandbox.workspace.channelByName('general').id,
        text: '/approve Monitor',
      });
      const view = await waitFor(async () =>
        (await proxied.state(alex)).views.find((v) =>
          JSON.stringify(v.view).includes('Suggested approver'),
        ),
      );
      expect(view).toBeDefined();
    } finally {
      await proxied.close();
    }
  });
});
