import { describe, expect, it } from 'vitest';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { openDatabase } from '../../src/store/database.ts';
import { type Harness, type HarnessOptions, harnessPerTest, waitFor } from '../helpers/harness.ts';

const harness = harnessPerTest();

const HOUR = 3_600_000;

async function openHome(hh: Harness, login: string) {
  const userId = hh.user(login);
  const published = hh.workspace.callsOf('views.publish').length;
  const response = await hh.slack.event({
    type: 'app_home_opened',
    user: userId,
    channel: 'D0HOME',
    tab: 'home',
  });
  expect(response.status).toBe(200);
  await waitFor(() => hh.workspace.callsOf('views.publish').length > published);
  const call = hh.workspace.callsOf('views.publish').at(-1);
  expect(call?.response.ok).toBe(true);
  const home = hh.workspace.homes.get(userId) as { blocks: unknown[] };
  return { home, text: JSON.stringify(home) };
}

async function command(hh: Harness, login: string, text: string) {
  const userId = hh.user(login);
  const seen = hh.workspace.ephemeral(userId).length;
  const response = await hh.slack.command(userId, hh.channel('general'), text);
  return { response, userId, next: () => waitFor(() => hh.workspace.ephemeral(userId)[seen]) };
}

describe('App Home', () => {
  it('shows empty sections for someone with no approvals', async () => {
    const hh = await harness();
    const { text } = await openHome(hh, 'alex.kim@corp.example');
    expect(text).toContain('Waiting for me (0)');
    expect(text).toContain('My requests (0)');
    expect(text).toContain('Nothing here.');
  });

  it('lists what waits for the approver and the requester’s own requests, with thread links', async () => {
    const hh = await harness({ env: { APPROVAL_WEB_URL: 'https://approvals.corp.example/' } });
    const first = await hh.startApproval('sam.taylor@corp.example', 'general', 'First request');
    const second = await hh.startApproval('sam.taylor@corp.example', 'general', 'Second request');
    const maria = await openHome(hh, 'maria.lopez@corp.example');
    expect(maria.text).toContain('Waiting for me (2)');
    expect(maria.text).toContain(first.approval.djbh);
    expect(maria.text).toContain(second.approval.djbh);
    expect(maria.text).toContain(
      `archives/${first.parent.channel}/p${first.parent.ts.replace('.', '')}`,
    );
    expect(maria.text).toContain('https://approvals.corp.example/');
    const sam = await openHome(hh, 'sam.taylor@corp.example');
    expect(sam.text).toContain('My requests (2)');
    expect(sam.text).toContain('Waiting for me (0)');
    expect(sam.text).toContain('Pending · 待办');
  });

  it('refreshes an opened Home tab when a request arrives and when it is decided', async () => {
    const hh = await harness();
    const maria = hh.user('maria.lopez@corp.example');
    expect((await openHome(hh, 'maria.lopez@corp.example')).text).toContain('Waiting for me (0)');
    const { approval } = await hh.startApproval();
    await waitFor(() =>
      JSON.stringify(hh.workspace.homes.get(maria)).includes('Waiting for me (1)'),
    );
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    await waitFor(() =>
      JSON.stringify(hh.workspace.homes.get(maria)).includes('Waiting for me (0)'),
    );
    // Someone who never opened Home gets none published.
    expect(hh.workspace.homes.has(hh.user('sam.taylor@corp.example'))).toBe(false);
  });

  it('publishes Home again on Slack’s retry of the event, and posts nothing', async () => {
    const hh = await harness();
    const userId = hh.user('sam.taylor@corp.example');
    const event = { type: 'app_home_opened', user: userId, channel: 'D0HOME', tab: 'home' };
    await hh.slack.event(event);
    const retried = await hh.slack.event(event, {
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_timeout',
    });
    expect(retried.status).toBe(200);
    await waitFor(() => hh.workspace.callsOf('views.publish').length === 2);
    expect(hh.workspace.callsOf('chat.postMessage')).toEqual([]);
  });

  it('stays within 100 blocks with 200 approvals and says how many more there are', async () => {
    const hh = await harness();
    const db = await openDatabase(hh.env.DATABASE_URL);
    const store = createApprovalStores(db.db, db.dialect);
    const now = new Date();
    for (let i = 0; i < 200; i++) {
      await store.createApproval(
        {
          djbh: `H${String(i).padStart(10, '0')}x`,
          teamId: hh.workspace.teamId,
          slack: { channelId: hh.channel('general') },
          parties: {
            requester: {
              slackId: hh.user('sam.taylor@corp.example'),
              login: 'sam.taylor@corp.example',
            },
            approver: {
              login: 'maria.lopez@corp.example',
              slackId: hh.user('maria.lopez@corp.example'),
            },
          },
          request: {
            title: `Request ${i}`,
            note: 'n',
            locale: 'en-US',
            createdAt: new Date(now.getTime() - i * 60_000),
          },
        },
        now,
      );
    }
    await db.close();
    const maria = await openHome(hh, 'maria.lopez@corp.example');
    expect(maria.home.blocks.length).toBeLessThanOrEqual(100);
    expect(maria.text).toContain('Waiting for me (200)');
    expect(maria.text).toContain('…and 180 more.');
    const sam = await openHome(hh, 'sam.taylor@corp.example');
    expect(sam.home.blocks.length).toBeLessThanOrEqual(100);
    expect(sam.text).toContain('My requests (200)');
  });
});

describe('subcommands', () => {
  it('answers /approve help in the acknowledgement, visible only to the person', async () => {
    const hh = await harness();
    const { response } = await command(hh, 'sam.taylor@corp.example', 'help');
    expect(response.json).toMatchObject({ response_type: 'ephemeral' });
    expect(String(response.json?.text)).toContain('/approve status &lt;number&gt;');
    // The other ways in are named too, so people find them.
    expect(String(response.json?.text)).toContain('*Request approval* in a message’s ⋯ menu');
    expect(hh.workspace.callsOf('views.open')).toEqual([]);
  });

  it('reports the status of an approval the app started, with its title and thread', async () => {
    const hh = await harness();
    const { approval } = await hh.startApproval();
    hh.sim.decide(approval.djbh, 'agree');
    const c = await command(hh, 'sam.taylor@corp.example', `status ${approval.djbh}`);
    const answer = await c.next();
    expect(answer.text).toContain(`Approval \`${approval.djbh}\`: Approved · 同意`);
    const maria = hh.workspace.userByLogin('maria.lopez@corp.example').id;
    expect(JSON.stringify(answer.blocks)).toContain(`Approver: <@${maria}>`);
    expect(JSON.stringify(answer.blocks)).toContain('New storage node');
    expect(JSON.stringify(answer.blocks)).toContain('/archives/');
  });

  it('reports the status of an approval the app did not start to its approver, and to nobody else', async () => {
    const hh = await harness();
    const started = await fetch(`${hh.sim.url}/api/job/to3part/v1/approval`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        appname: 'slack-approvals',
        appkey: 'sandbox-app-key',
      },
      body: JSON.stringify({
        user_id: 'x@corp.example',
        special_approver: 'maria.lopez@corp.example',
        title: 'Elsewhere',
        apply_note: 'n',
        route_user_id: '',
        route_node: '0',
        participant: '',
      }),
    }).then((r) => r.json() as Promise<{ data: { djbh: string } }>);
    const answer = await (
      await command(hh, 'maria.lopez@corp.example', `status ${started.data.djbh}`)
    ).next();
    expect(answer.text).toContain('Pending · 待办');
    // Maria is on Slack: she is mentioned, not named by her e-mail.
    const maria = hh.workspace.userByLogin('maria.lopez@corp.example').id;
    expect(JSON.stringify(answer.blocks)).toContain(`Approver: <@${maria}>`);
    expect(JSON.stringify(answer.blocks)).not.toContain('maria.lopez@corp.example');
    // Sam is not its approver, and the app knows nothing else about it: as if it did not exist.
    const sam = await (
      await command(hh, 'sam.taylor@corp.example', `status ${started.data.djbh}`)
    ).next();
    expect(sam.text).toContain(`There is no approval \`${started.data.djbh}\` that you can see`);
  });

  it('says when the service does not know the number, or it is not a number', async () => {
    const hh = await harness();
    expect(
      (await (await command(hh, 'sam.taylor@corp.example', 'status NoSuchNumbex')).next()).text,
    ).toContain('There is no approval `NoSuchNumbex` that you can see');
    expect(
      (await (await command(hh, 'sam.taylor@corp.example', 'status no way!')).next()).text,
    ).toContain('is not an approval number');
  });

  it('lists my open requests and what waits for me', async () => {
    const hh = await harness();
    const { approval } = await hh.startApproval();
    const sam = await (await command(hh, 'sam.taylor@corp.example', 'list')).next();
    expect(JSON.stringify(sam.blocks)).toContain(approval.djbh);
    const maria = await (await command(hh, 'maria.lopez@corp.example', 'list')).next();
    expect(maria.text).toContain('Waiting for you: 1');
  });

  it('treats other text as the title to prefill', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example', 'general', 'list of parts');
    expect(JSON.stringify(view.view)).toContain('"initial_value":"list of parts"');
  });
});

describe('account linking', () => {
  // Linking oneself with a session token is an opt-in (the default is admin).
  const options: HarnessOptions = {
    env: { ACCOUNT_LINKING: 'self' },
    extraSlackUsers: [
      { login: 'sam.personal', name: 'Sam T', email: 'sam@personal.example', locale: 'en-US' },
    ],
  };

  async function link(hh: Harness, token: string) {
    const userId = hh.workspace.userByLogin('sam@personal.example').id;
    await hh.slack.command(userId, hh.channel('general'), 'link');
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === userId && v.view.callback_id === 'link_account',
      ),
    );
    const result = await hh.slack.submitView(view.id, { session_token_input: token });
    return { userId, view, result };
  }

  it('links the Slack user to the login behind a session token, which then counts everywhere, and never keeps the token', async () => {
    const hh = await harness(options);
    const token = hh.sim.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
    const { userId, view } = await link(hh, token);
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes(
        'Linked as *SAM.TAYLOR* (sam.taylor@corp.example)',
      ),
    );
    // The linked login is the requester now: the form suggests Sam Taylor's leader.
    await hh.slack.command(userId, hh.channel('general'), 'Linked request');
    const form = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === userId && JSON.stringify(v.view).includes('Suggested approver'),
      ),
    );
    await hh.slack.submitView(form.id, { note_input: 'n' });
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    expect(approval.requester).toBe('sam.taylor@corp.example');
    const home = await openHome(hh, 'sam@personal.example');
    expect(home.text).toContain('Linked to the approval service as SAM.TAYLOR');

    expect(hh.logs.lines.join('\n')).not.toContain(token);
    const db = await openDatabase(hh.env.DATABASE_URL);
    for (const table of ['tracked_approvals', 'announcements', 'linked_accounts'] as const) {
      const rows = await db.db.selectFrom(table).selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(token);
    }
    await db.close();
    for (const call of hh.workspace.calls) {
      if (
        call.method === 'views.update' ||
        call.method === 'views.open' ||
        call.method.startsWith('chat.')
      ) {
        expect(JSON.stringify(call.args)).not.toContain(token);
      }
    }
  });

  it('links nobody to a login another Slack account is linked to, and says so', async () => {
    const hh = await harness(options);
    // Alex's account holds Sam Taylor's login (an admin's mistake, or Alex linked first).
    const alex = hh.user('alex.kim@corp.example');
    const db = await openDatabase(hh.env.DATABASE_URL);
    const links = createAccountLinkStore(db.db, db.dialect);
    await links.link({
      slackUserId: alex,
      teamId: '',
      login: 'sam.taylor@corp.example',
      name: 'SAM.TAYLOR',
      linkedAt: new Date(),
    });
    const token = hh.sim.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
    const { userId, view } = await link(hh, token);
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes(
        '*sam.taylor@corp.example* is linked to another Slack account already',
      ),
    );
    // Before, both accounts were linked to the login and both acted as it.
    expect(await links.get(userId)).toBeUndefined();
    expect((await links.findByLogin('sam.taylor@corp.example'))?.slackUserId).toBe(alex);
    await db.close();
  });

  it('keeps the token out of the logs even at LOG_LEVEL=debug', async () => {
    const hh = await harness({ ...options, env: { ...options.env, LOG_LEVEL: 'debug' } });
    const token = hh.sim.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
    const { view } = await link(hh, token);
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes('Linked as'),
    );
    expect(hh.logs.lines.length).toBeGreaterThan(0);
    expect(hh.logs.lines.join('\n')).not.toContain(token);
  });

  it('explains a session that is not logged in, and keeps the token out of the form', async () => {
    const hh = await harness(options);
    const token = 'Z'.repeat(64);
    const { view } = await link(hh, token);
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes(
        'not logged in or has expired',
      ),
    );
    expect(JSON.stringify(hh.workspace.views.get(view.id)?.view)).not.toContain(token);
    expect(hh.logs.lines.join('\n')).not.toContain(token);
  });

  it('explains a single sign-on failure', async () => {
    const hh = await harness(options);
    hh.sim.setFaults('user-info', { ssoError: true });
    const { view } = await link(hh, 'A'.repeat(64));
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes(
        'could not check this session (sso code error',
      ),
    );
    const db = await openDatabase(hh.env.DATABASE_URL);
    expect(await db.db.selectFrom('linked_accounts').selectAll().execute()).toEqual([]);
    await db.close();
  });

  it('answers the form at once while Slack is slow to say who the person is, then links', async () => {
    let offset = 0;
    const hh = await harness({ ...options, now: () => new Date(Date.now() + offset) });
    const token = hh.sim.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
    const userId = hh.workspace.userByLogin('sam@personal.example').id;
    await hh.slack.command(userId, hh.channel('general'), 'link');
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === userId && v.view.callback_id === 'link_account',
      ),
    );
    // What the app knew of the person is stale, and users.info now takes 4 s.
    offset += 11 * 60_000;
    hh.faults.hang('users.info', 4000, { count: 5 });
    const started = performance.now();
    const { response } = await hh.slack.submitView(view.id, { session_token_input: token });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(response.json).toMatchObject({ response_action: 'update' });
    expect(hh.logs.lines.join('\n')).not.toContain('no listener acknowledged in time');
    await waitFor(
      () => JSON.stringify(hh.workspace.views.get(view.id)?.view).includes('Linked as'),
      8000,
      'the form to say linked',
    );
  });

  it('refuses an empty token as a field error', async () => {
    const hh = await harness(options);
    const { result } = await link(hh, '   ');
    expect(result.errors).toEqual({ session_token: 'Paste the value of the sid cookie.' });
  });

  it('unlinks', async () => {
    const hh = await harness(options);
    const token = hh.sim.people.find((p) => p.login === 'sam.taylor@corp.example')?.token ?? '';
    const { view } = await link(hh, token);
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes('Linked as'),
    );
    const c = await command(hh, 'sam@personal.example', 'unlink');
    expect((await c.next()).text).toContain('link is removed');
    const again = await command(hh, 'sam@personal.example', 'unlink');
    expect((await again.next()).text).toContain('no linked approval-service account');
  });
});

describe('reminders', () => {
  it('reminds the approver after a day, at most once a day and at most N times, noted in the thread', async () => {
    const hh = await harness({ env: { REMINDER_AFTER_HOURS: '24', REMINDER_MAX: '2' } });
    const { approval, parent } = await hh.startApproval();
    const t0 = Date.now();
    const maria = hh.user('maria.lopez@corp.example');
    const reminders = () =>
      hh.workspace.messages.filter(
        (m) =>
          m.text.includes('Reminder:') && hh.workspace.channels.get(m.channel)?.members.has(maria),
      );
    const notes = () =>
      hh.workspace.replies(parent.channel, parent.ts).filter((m) => m.text.includes('Reminded'));
    await hh.app.poll(new Date(t0 + 23 * HOUR));
    expect(reminders()).toHaveLength(0);
    await hh.app.poll(new Date(t0 + 25 * HOUR));
    expect(reminders()).toHaveLength(1);
    expect(reminders()[0]?.text).toContain('waiting 1 day');
    expect(notes()).toHaveLength(1);
    await hh.app.poll(new Date(t0 + 30 * HOUR));
    expect(reminders()).toHaveLength(1);
    await hh.app.poll(new Date(t0 + 50 * HOUR));
    expect(reminders()).toHaveLength(2);
    expect(notes()[1]?.text).toContain('reminder 2');
    await hh.app.poll(new Date(t0 + 80 * HOUR));
    expect(reminders()).toHaveLength(2);
    hh.sim.decide(approval.djbh, 'agree');
  });

  it('sends no reminder when reminders are switched off', async () => {
    const hh = await harness({ env: { REMINDER_MAX: '0' } });
    await hh.startApproval();
    await hh.app.poll(new Date(Date.now() + 30 * HOUR));
    expect(hh.workspace.messages.filter((m) => m.text.includes('Reminder'))).toHaveLength(0);
  });
});

describe('Chinese and English', () => {
  it('shows the form in Chinese to a zh-CN person and in English to an en-US person', async () => {
    const hh = await harness();
    const zh = JSON.stringify((await hh.openModal('li.wei@corp.example')).view);
    expect(zh).toContain('发起审批');
    expect(zh).toContain('建议审批人');
    const en = JSON.stringify((await hh.openModal('sam.taylor@corp.example')).view);
    expect(en).toContain('Request approval');
    expect(en).toContain('Suggested approver');
  });

  it('writes channel messages in the workspace language, whoever asks', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval('li.wei@corp.example');
    // APP_LANGUAGE is unset: English in #general, with the service's own word beside it.
    expect(JSON.stringify(parent.blocks)).toContain('Approval request');
    expect(JSON.stringify(parent.blocks)).toContain('Pending · 待办');
    hh.sim.decide(approval.djbh, 'refuse');
    await hh.app.poll();
    expect(hh.workspace.replies(parent.channel, parent.ts).at(-1)?.text).toContain(
      'Rejected · 不同意',
    );
  });

  it('says each status once in Chinese when the workspace language is zh', async () => {
    const hh = await harness({ env: { APP_LANGUAGE: 'zh' } });
    const { approval, parent } = await hh.startApproval('sam.taylor@corp.example');
    const blocks = JSON.stringify(parent.blocks);
    expect(blocks).toContain('审批申请');
    expect(blocks).toContain(':hourglass_flowing_sand: 待办');
    expect(blocks).not.toContain('待审批');
    hh.sim.decide(approval.djbh, 'refuse');
    await hh.app.poll();
    const reply = hh.workspace.replies(parent.channel, parent.ts).at(-1)?.text ?? '';
    expect(reply).toContain('不同意');
    expect(reply).not.toContain('已拒绝');
  });

  it('writes a request in the requester’s DM in their own language', async () => {
    const hh = await harness();
    const li = hh.workspace.userByLogin('li.wei@corp.example').id;
    const { approval, parent } = await hh.startApproval(
      'li.wei@corp.example',
      hh.workspace.appDm(li).name,
    );
    expect(parent.channel).toMatch(/^D/);
    expect(JSON.stringify(parent.blocks)).toContain('审批申请');
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    expect(hh.workspace.replies(parent.channel, parent.ts).at(-1)?.text).toContain('同意');
  });

  it('answers help in Chinese to a zh-CN person whose first command it is', async () => {
    const hh = await harness();
    // Nothing else first: the app has not looked this person up yet.
    const { response } = await command(hh, 'li.wei@corp.example', 'help');
    expect(response.status).toBe(200);
    expect(String(response.json?.text)).toContain('发起审批');
    const en = await command(hh, 'sam.taylor@corp.example', 'help');
    expect(String(en.response.json?.text)).toContain('Request approval');
  });

  it('answers help in Chinese to a zh-CN person', async () => {
    const hh = await harness();
    await hh.openModal('li.wei@corp.example');
    const { response } = await command(hh, 'li.wei@corp.example', 'help');
    expect(String(response.json?.text)).toContain('发起审批');
  });
});

/** The approver's DM about `djbh` (Maria Lopez is the approver the form suggests). */
function approverDm(hh: Harness, djbh: string) {
  return hh.workspace.messages.find(
    (m) =>
      m.text.includes(djbh) &&
      hh.workspace.channels.get(m.channel)?.members.has(hh.user('maria.lopez@corp.example')) &&
      hh.workspace.channels.get(m.channel)?.kind === 'im',
  );
}

describe('links to the approval service', () => {
  it('puts an “Open in approval service” button on the request and the approver’s DM', async () => {
    const hh = await harness({ env: { APPROVAL_WEB_URL: 'https://approvals.corp.example/' } });
    const { parent, approval } = await hh.startApproval();
    // The approver's list of approvals on the service (OpenC3's route), where the new one is on top.
    const list = 'https://approvals.corp.example/#/approval/4000000000';
    expect(JSON.stringify(parent.blocks)).toContain(`"url":"${list}"`);
    const dm = approverDm(hh, approval.djbh);
    expect(JSON.stringify(dm?.blocks)).toContain('Open in approval service');
    expect(JSON.stringify(dm?.blocks)).toContain(`"url":"${list}"`);
    // …and says which row of that list is this one.
    expect(JSON.stringify(dm?.blocks)).toContain(`decide the one numbered \``);
    expect(JSON.stringify(dm?.blocks)).toContain(`numbered \`${approval.djbh}\``);
  });

  it('takes the list’s route from APPROVAL_WEB_LIST_PATH, for a service with another web UI', async () => {
    const hh = await harness({
      env: {
        APPROVAL_WEB_URL: 'https://corp.example/approvals/index.html',
        APPROVAL_WEB_LIST_PATH: '/c3/#/approval/0',
      },
    });
    const { approval } = await hh.startApproval();
    expect(JSON.stringify(approverDm(hh, approval.djbh)?.blocks)).toContain(
      '"url":"https://corp.example/c3/#/approval/0"',
    );
    // Home: what waits for Maria leads to her list.
    const maria = await openHome(hh, 'maria.lopez@corp.example');
    expect(maria.text).toContain('https://corp.example/c3/#/approval/0');
  });

  it('has no such button without APPROVAL_WEB_URL', async () => {
    const hh = await harness();
    const { parent } = await hh.startApproval();
    expect(JSON.stringify(parent.blocks)).not.toContain('Open in approval service');
  });
});
