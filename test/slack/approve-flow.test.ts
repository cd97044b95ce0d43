import { describe, expect, it } from 'vitest';
import type { View } from '../../src/sandbox/workspace.ts';
import { type Harness, harnessPerTest, isRequestMessage, waitFor } from '../helpers/harness.ts';

const harness = harnessPerTest();

const viewText = (view: View | undefined) => JSON.stringify(view?.view ?? {});

async function submitted(
  hh: Harness,
  login: string,
  inputs: Record<string, string | undefined>,
  channel = 'general',
  text = 'New storage node',
) {
  const view = await hh.openModal(login, channel, text);
  const result = await hh.slack.submitView(view.id, inputs);
  return { view, ...result };
}

/** Starts an approval through Slack and waits for its request message. */

describe('opening the modal', () => {
  it('opens within the trigger window even when the department lookup takes 2.5 s, then fills it in', async () => {
    const hh = await harness({ env: { APPROVAL_TIMEOUT_MS: '5000' } });
    hh.sim.setFaults('department', { latencyMs: 2500 });
    const li = hh.user('sam.taylor@corp.example');
    const sent = Date.now();
    const response = await hh.slack.command(li, hh.channel('general'), '');
    expect(response.status).toBe(200);
    const opened = await waitFor(() => hh.workspace.callsOf('views.open')[0]);
    expect(opened.response.ok).toBe(true);
    expect(opened.at - sent).toBeLessThan(3000);
    expect(viewText([...hh.workspace.views.values()][0])).toContain('Looking you up');
    // The lookup lands later, by views.update on the same view.
    const filled = await waitFor(() => hh.workspace.callsOf('views.update')[0], 6000);
    expect(filled.response.ok).toBe(true);
    expect(filled.at - sent).toBeGreaterThanOrEqual(2500);
    expect(viewText([...hh.workspace.views.values()][0])).toContain('Storage 存储组');
  });

  it('prefills the title from the command text and shows the chain with the suggested approver', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example', 'general', 'New storage node');
    const text = viewText(view);
    expect(text).toContain('"initial_value":"New storage node"');
    expect(text).toContain('Cloud Platform 云平台 › Infrastructure 基础架构部 › Storage 存储组');
    expect(text).toContain(`"initial_user":"${hh.user('maria.lopez@corp.example')}"`);
    expect(text).toContain('Suggested approver: Maria Lopez');
  });

  it('prefills a title too long for the service whole, says so, and refuses it until shortened', async () => {
    const hh = await harness();
    const long = `${'Rack '.repeat(40)}X`; // 201 characters
    const view = await hh.openModal('sam.taylor@corp.example', 'general', long);
    const text = viewText(view);
    expect(text).toContain(`"initial_value":"${long}"`);
    expect(text).toContain('201 characters: the approval service takes at most 200');
    const refused = await hh.slack.submitView(view.id, { note_input: 'n' });
    expect(refused.errors).toEqual({
      title: 'Too long for the approval service: 201 characters, at most 200.',
    });
    expect(hh.sim.approvals()).toEqual([]);
    const fitted = await hh.slack.submitView(view.id, {
      title_input: long.slice(0, 200),
      note_input: 'n',
    });
    expect(fitted.errors).toBeUndefined();
  });

  it('says there is no leader on record for the head of the product line', async () => {
    const hh = await harness();
    // Zhou Lan's Slack locale is zh-CN: she reads it in Chinese.
    const text = viewText(await hh.openModal('zhou.lan@corp.example'));
    expect(text).toContain('审批系统中没有你的领导信息');
    expect(text).not.toContain('initial_user');
  });

  it('says the service does not know a person it answers with made-up defaults for', async () => {
    const hh = await harness({
      extraSlackUsers: [{ login: 'new.hire@corp.example', name: 'New Hire' }],
    });
    const text = viewText(await hh.openModal('new.hire@corp.example'));
    expect(text).toContain('does not know new.hire@corp.example');
    expect(text).not.toContain('initial_user');
  });

  it('says when the nearest leader is not on Slack', async () => {
    const hh = await harness({ notOnSlack: ['maria.lopez@corp.example'] });
    const text = viewText(await hh.openModal('sam.taylor@corp.example'));
    expect(text).toContain('Your nearest leader, maria.lopez@corp.example, is not on Slack');
    expect(text).not.toContain('initial_user');
  });

  it('says when the service cannot be reached for a suggestion, and the form still works', async () => {
    const hh = await harness();
    hh.sim.setFaults('department', { html502: true });
    const view = await hh.openModal('sam.taylor@corp.example');
    expect(viewText(view)).toContain('could not be reached to suggest an approver');
    hh.sim.clearFaults();
    const { errors } = await hh.slack.submitView(view.id, {
      note_input: 'x',
      approver_select: hh.user('chen.hao@corp.example'),
    });
    expect(errors).toBeUndefined();
    await waitFor(() => hh.sim.approvals()[0]);
    expect(hh.sim.approvals()[0]?.approver).toBe('chen.hao@corp.example');
  });

  it('says so when Slack does not share the person’s e-mail', async () => {
    const hh = await harness({
      extraSlackUsers: [{ login: 'hidden@corp.example', name: 'Hidden', email: null }],
    });
    const userId = hh.workspace.userByLogin('hidden@corp.example').id;
    await hh.slack.command(userId, hh.channel('general'), '');
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find((v) =>
        viewText(v).includes('no e-mail address the app can read'),
      ),
    );
    // Submitting anyway says why nothing can be started, instead of failing silently.
    await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_select: hh.user('chen.hao@corp.example'),
    });
    expect(viewText(hh.workspace.views.get(view.id))).toContain(
      'could not read your e-mail address',
    );
    expect(hh.sim.approvals()).toEqual([]);
  });
});

describe('submitting', () => {
  it('returns field errors for a missing note, a missing approver and an own approval, starting nothing', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example');
    const empty = await hh.slack.submitView(view.id, {
      title_input: 'T',
      note_input: '   ',
      approver_select: undefined,
    });
    expect(empty.errors).toEqual({ note: 'Please fill this in.' });
    const self = await hh.slack.submitView(view.id, {
      title_input: 'T',
      note_input: 'n',
      approver_select: hh.user('sam.taylor@corp.example'),
    });
    expect(self.errors).toEqual({
      approver: 'You cannot approve your own request; choose someone else.',
    });
    const bot = await hh.slack.submitView(view.id, {
      title_input: 'T',
      note_input: 'n',
      approver_select: hh.workspace.botUserId,
    });
    expect(bot.errors).toEqual({ approver: 'Choose a person, not an app.' });
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('keeps the form and what was typed when Slack fails before the answer', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example');
    hh.workspace.failNext('users.info', 'internal_error');
    const { errors } = await hh.slack.submitView(view.id, {
      note_input: 'Kept',
      approver_select: hh.user('chen.hao@corp.example'),
    });
    expect(errors).toEqual({ note: expect.stringContaining('Something went wrong on our side') });
    expect(hh.workspace.views.get(view.id)).toBeDefined();
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('sends all seven fields as strings with the requester’s and approver’s logins', async () => {
    const hh = await harness();
    await submitted(hh, 'sam.taylor@corp.example', { note_input: 'For Q3' });
    await waitFor(() => hh.sim.approvals()[0]);
    const sent = hh.sim.received().find((r) => r.endpoint === 'start-approval');
    expect(sent?.contentType).toBe('application/json');
    expect(sent?.headers).toEqual(expect.arrayContaining(['appname', 'appkey']));
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({
      user_id: 'sam.taylor@corp.example',
      special_approver: 'maria.lopez@corp.example',
      title: 'New storage node',
      apply_note: 'For Q3',
      route_user_id: '',
      route_node: '0',
      participant: '',
    });
  });

  it('adapts a quote and an emoji in the note and tells the person what changed', async () => {
    const hh = await harness();
    const { view } = await submitted(hh, 'sam.taylor@corp.example', {
      note_input: "Sam's request 🚀",
    });
    const [approval] = await waitFor(() =>
      hh.sim.approvals().length ? hh.sim.approvals() : undefined,
    );
    expect(approval?.note).toBe('Sam’s request :rocket:');
    await waitFor(() =>
      viewText(hh.workspace.views.get(view.id)).includes('Your text was adjusted'),
    );
    const text = viewText(hh.workspace.views.get(view.id));
    expect(text).toContain("' became ’");
    expect(text).toContain('emoji were written as :names:');
  });

  it('shows the approval number and where the request is in the modal once started', async () => {
    const hh = await harness();
    const { view } = await submitted(hh, 'sam.taylor@corp.example', { note_input: 'n' });
    const [approval] = await waitFor(() =>
      hh.sim.approvals().length ? hh.sim.approvals() : undefined,
    );
    await waitFor(() =>
      viewText(hh.workspace.views.get(view.id)).includes(`Approval *${approval?.djbh}* started`),
    );
    expect(viewText(hh.workspace.views.get(view.id))).toContain(
      `The request is posted in <#${hh.channel('general')}>`,
    );
  });

  it('starts one approval when the same modal is submitted twice at once', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example', 'general', 'Twice');
    const stored = hh.workspace.views.get(view.id);
    if (!stored) throw new Error('no view');
    const snapshot = structuredClone(stored.view);
    const first = hh.slack.submitView(view.id, { note_input: 'n' });
    // The replay carries the same view as Slack sent it the first time.
    hh.workspace.views.set(view.id, { ...stored, view: snapshot });
    const second = hh.slack.submitView(view.id, { note_input: 'n' }).catch(() => undefined);
    await Promise.all([first, second]);
    await waitFor(() => hh.workspace.history(hh.channel('general')).length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toHaveLength(1);
  });
});

describe('the request message', () => {
  it('posts title, requester, approver, note, number and status in the channel, and DMs the approver', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    const blocks = JSON.stringify(parent.blocks);
    expect(parent.channel).toBe(hh.channel('general'));
    expect(blocks).toContain('New storage node');
    expect(blocks).toContain(`<@${hh.user('sam.taylor@corp.example')}>`);
    expect(blocks).toContain(`<@${hh.user('maria.lopez@corp.example')}>`);
    expect(blocks).toContain('For the Q3 expansion');
    expect(blocks).toContain(approval.djbh);
    expect(blocks).toContain('Pending · 待办');
    const maria = hh.user('maria.lopez@corp.example');
    const dm = await waitFor(() =>
      hh.workspace.messages.find(
        (m) =>
          hh.workspace.channels.get(m.channel)?.kind === 'im' &&
          hh.workspace.channels.get(m.channel)?.members.has(maria),
      ),
    );
    expect(dm.text).toContain(approval.djbh);
    // Sent without waiting for the thread, then edited to link to it.
    await waitFor(() => JSON.stringify(dm.blocks).includes('View request'), 5000, 'the link');
    expect(hh.workspace.messages.filter((m) => m.channel === dm.channel)).toHaveLength(1);
    // The edit is of its blocks: the approver does not see "(edited)" on a message just arrived.
    expect(dm.edited).toBeUndefined();
  });

  it('says the request is in the DM with the app when /approve was run there', async () => {
    const hh = await harness();
    const dm = hh.workspace.appDm(hh.user('sam.taylor@corp.example'));
    const view = await hh.openModal('sam.taylor@corp.example', dm.name);
    await hh.slack.submitView(view.id, { note_input: 'n' });
    const modal = await waitFor(() => {
      const text = JSON.stringify(hh.workspace.views.get(view.id)?.view ?? {});
      return text.includes('started') && text;
    });
    expect(modal).toContain('your direct messages with the app');
    expect(modal).not.toContain(`<#${dm.id}>`);
  });

  it('falls back to the requester’s DM when the app is not in the channel', async () => {
    const hh = await harness();
    await submitted(hh, 'sam.taylor@corp.example', { note_input: 'n' }, 'random');
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    const parent = await waitFor(() =>
      hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    );
    const channel = hh.workspace.channels.get(parent.channel);
    expect(channel?.kind).toBe('im');
    expect(channel?.members.has(hh.user('sam.taylor@corp.example'))).toBe(true);
    const first = hh.workspace
      .callsOf('chat.postMessage')
      .find((c) => c.args.channel === hh.channel('random'));
    expect(first?.response.error).toBe('not_in_channel');
    const modal = await waitFor(() =>
      [...hh.workspace.views.values()].find((v) =>
        JSON.stringify(v.view).includes('is in your direct messages'),
      ),
    );
    expect(JSON.stringify(modal.view)).toContain(`not a member of <#${hh.channel('random')}>`);
  });

  it('falls back to the DM from a private channel or another people’s DM', async () => {
    const hh = await harness();
    await submitted(hh, 'sam.taylor@corp.example', { note_input: 'n' }, 'secret');
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    const parent = await waitFor(() =>
      hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    );
    expect(hh.workspace.channels.get(parent.channel)?.kind).toBe('im');
  });

  it('lets the person keep a leader who is not on Slack by login, and tells them once that the leader was not messaged', async () => {
    const hh = await harness({ notOnSlack: ['maria.lopez@corp.example'] });
    const view = await hh.openModal('sam.taylor@corp.example');
    expect(viewText(view)).toContain('"initial_value":"maria.lopez@corp.example"');
    await hh.slack.submitView(view.id, { note_input: 'n' });
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    expect(approval.approver).toBe('maria.lopez@corp.example');
    const parent = await waitFor(() => hh.workspace.history(hh.channel('general'))[0]);
    // The approver's DM does not wait for the thread, so the note reaches the requester where
    // they can be told at that moment (their DM, before the thread exists), and only once.
    const notes = () =>
      hh.workspace.messages.filter((m) =>
        m.text.includes('The approver maria.lopez@corp.example is not on Slack'),
      );
    await waitFor(() => notes().length > 0);
    await hh.app.deliver();
    expect(notes()).toHaveLength(1);
    expect(JSON.stringify(parent.blocks)).toContain('maria.lopez@corp.example');
  });

  it('refuses a typed approver login the service could not take', async () => {
    const hh = await harness({ notOnSlack: ['maria.lopez@corp.example'] });
    const view = await hh.openModal('sam.taylor@corp.example');
    const { errors } = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_login_input: "maria o'brien",
    });
    expect(errors).toEqual({ approver_login: expect.stringContaining('A login has only letters') });
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('refuses an approver picked in Slack whom the approval service does not know, in words, starting nothing', async () => {
    const hh = await harness();
    // "Sam T": a Slack account whose e-mail is a personal address the service has never heard of.
    const personal = hh.workspace.users.get(hh.user('chen.hao@corp.example'));
    if (!personal) throw new Error('no Slack user for chen.hao');
    personal.email = 'sam@personal.example';
    const view = await hh.openModal('sam.taylor@corp.example');
    const { errors } = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_select: personal.id,
    });
    expect(errors).toEqual({
      approver: expect.stringContaining(
        'The approval service does not know sam@personal.example, so nobody could ever decide this request there.',
      ),
    });
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('refuses a typed approver login the service does not know, and takes one it does', async () => {
    const hh = await harness({ notOnSlack: ['maria.lopez@corp.example'] });
    const view = await hh.openModal('sam.taylor@corp.example');
    const unknown = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_login_input: 'nobody@corp.example',
    });
    expect(unknown.errors).toEqual({
      approver_login: expect.stringContaining('does not know nobody@corp.example'),
    });
    // The lookup script refuses a one-character login outright: it is never sent either.
    const refused = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_login_input: 'x',
    });
    expect(refused.errors).toEqual({ approver_login: expect.stringContaining('does not know x') });
    expect(hh.sim.approvals()).toEqual([]);
    const known = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_login_input: 'chen.hao@corp.example',
    });
    expect(known.errors).toBeUndefined();
    await waitFor(() => hh.sim.approvals().length === 1);
    expect(hh.sim.approvals()[0]?.approver).toBe('chen.hao@corp.example');
  });

  it('asks for an approver when the leader is not on Slack and the login was cleared', async () => {
    const hh = await harness({ notOnSlack: ['maria.lopez@corp.example'] });
    const view = await hh.openModal('sam.taylor@corp.example');
    const { errors } = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_login_input: '',
    });
    expect(errors).toEqual({ approver: 'Choose who should approve.' });
  });
});

describe('status updates', () => {
  it('posts the approval in the thread, updates the parent, and stops checking', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    await hh.app.poll();
    expect(hh.workspace.replies(parent.channel, parent.ts)).toEqual([]);
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    const replies = hh.workspace.replies(parent.channel, parent.ts);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toContain('Approved · 同意');
    expect(JSON.stringify(replies[0]?.blocks)).toContain(
      `<@${hh.user('maria.lopez@corp.example')}>`,
    );
    const updated = hh.workspace.messages.find((m) => m.ts === parent.ts);
    expect(hh.workspace.callsOf('chat.update').some((c) => c.args.ts === parent.ts)).toBe(true);
    // Updated with blocks, so Slack shows it without "(edited)" (chat.update's documentation).
    expect(updated?.edited).toBeUndefined();
    expect(JSON.stringify(updated?.blocks)).toContain('Approved · 同意');
    const checks = hh.sim.requestCounts()['approval-status'];
    await hh.app.poll(new Date(Date.now() + 3_600_000));
    expect(hh.sim.requestCounts()['approval-status']).toBe(checks);
    expect(hh.workspace.replies(parent.channel, parent.ts)).toHaveLength(1);
  });

  it('sends the decision to the requester’s DM when the app was removed from the channel', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    hh.workspace.channels.get(parent.channel)?.members.delete(hh.workspace.botUserId);
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    const sam = hh.user('sam.taylor@corp.example');
    const dm = hh.workspace.messages.find(
      (m) =>
        m.text.includes('About your request') &&
        hh.workspace.channels.get(m.channel)?.members.has(sam),
    );
    expect(dm?.text).toContain(approval.djbh);
    expect(dm?.text).toContain('Approved · 同意');
    expect(hh.workspace.replies(parent.channel, parent.ts)).toEqual([]);
  });

  it('posts a rejection in the thread', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    hh.sim.decide(approval.djbh, 'refuse');
    await hh.app.poll();
    const [reply] = hh.workspace.replies(parent.channel, parent.ts);
    expect(reply?.text).toContain('Rejected · 不同意');
    expect(JSON.stringify(hh.workspace.messages.find((m) => m.ts === parent.ts)?.blocks)).toContain(
      'Rejected · 不同意',
    );
  });

  it('credits whoever the service says decided, after it gave the approval to someone else', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    const maria = hh.user('maria.lopez@corp.example');
    const alex = hh.user('alex.kim@corp.example');
    expect(approval.approver).toBe('maria.lopez@corp.example');
    // The service's administrators give it to Alex; Alex rejects it.
    hh.sim.reassign(approval.djbh, 'alex.kim@corp.example');
    hh.sim.decide(approval.djbh, 'refuse');
    await hh.app.poll();
    const reply = await waitFor(() => hh.workspace.replies(parent.channel, parent.ts)[0]);
    expect(reply.text).toContain('Rejected · 不同意');
    expect(JSON.stringify(reply)).toContain(`<@${alex}>`);
    expect(JSON.stringify(reply)).not.toContain(`<@${maria}>`);
  });

  it('delivers a decision taken while the app was down after a restart, once', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    await hh.restart(() => {
      hh.sim.decide(approval.djbh, 'agree');
    });
    await hh.app.poll();
    await hh.app.poll();
    await hh.restart();
    await hh.app.poll();
    expect(
      hh.workspace.replies(parent.channel, parent.ts).filter((m) => m.text.includes('Approved')),
    ).toHaveLength(1);
  });

  it('stays quiet in the thread while the service is down, and resumes when it is back', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval();
    hh.sim.setFaults('approval-status', { outage: true });
    hh.sim.decide(approval.djbh, 'agree');
    const counts = await hh.app.poll();
    expect(counts.failed).toBe(1);
    expect(hh.workspace.replies(parent.channel, parent.ts)).toEqual([]);
    hh.sim.clearFaults();
    // The failed check is retried after its backoff (30 s).
    await hh.app.poll(new Date(Date.now() + 31_000));
    expect(hh.workspace.replies(parent.channel, parent.ts)).toHaveLength(1);
  });

  it('stops following an approval nobody decided after the configured age, and says so once', async () => {
    const hh = await harness({ env: { POLL_GIVE_UP_DAYS: '30' } });
    const { parent } = await hh.startApproval();
    const later = new Date(Date.now() + 31 * 86_400_000);
    await hh.app.poll(later);
    await hh.app.poll(new Date(later.getTime() + 86_400_000));
    const replies = hh.workspace.replies(parent.channel, parent.ts);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toContain('No decision after 30 days');
  });
});

describe('when the service fails', () => {
  it('tells the person in the modal when the service is down, keeping what they typed', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example', 'general', 'Kept title');
    hh.sim.setFaults('start-approval', { html502: true });
    await hh.slack.submitView(view.id, { note_input: 'Kept note' });
    await waitFor(() => viewText(hh.workspace.views.get(view.id)).includes(':warning:'));
    const text = viewText(hh.workspace.views.get(view.id));
    expect(text).toContain('did not answer in time');
    expect(text).toContain('"initial_value":"Kept title"');
    expect(text).toContain('"initial_value":"Kept note"');
    expect(hh.workspace.history(hh.channel('general'))).toEqual([]);
  });

  it('tells the person nothing was started when the service cannot be reached at all', async () => {
    const hh = await harness({ env: { APPROVAL_BASE_URL: 'http://127.0.0.1:9' } });
    const view = await hh.openModal('sam.taylor@corp.example');
    await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_select: hh.user('chen.hao@corp.example'),
    });
    await waitFor(
      () => viewText(hh.workspace.views.get(view.id)).includes('not answering right now'),
      8000,
    );
    // The form is back for another try, with nothing stored and nothing posted.
    expect(viewText(hh.workspace.views.get(view.id))).toContain('"submit"');
    expect(hh.workspace.history(hh.channel('general'))).toEqual([]);
  });

  it('tells the person when the service refuses the app’s credentials', async () => {
    const hh = await harness();
    const view = await hh.openModal('sam.taylor@corp.example');
    // The key was rotated in the service after the app started.
    hh.sim.rotateKey('a-new-key');
    await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_select: hh.user('chen.hao@corp.example'),
    });
    await waitFor(() =>
      viewText(hh.workspace.views.get(view.id)).includes('refused this app’s credentials'),
    );
    expect(viewText(hh.workspace.views.get(view.id))).not.toContain(hh.env.APPROVAL_APP_KEY);
    expect(hh.logs.lines.join('\n')).not.toContain(hh.env.APPROVAL_APP_KEY);
  });
});

describe('the HTTP endpoint', () => {
  it('refuses a bad signature and a stale timestamp with 401', async () => {
    const hh = await harness();
    const body = new URLSearchParams({
      command: '/approve',
      text: '',
      user_id: 'U1',
      channel_id: 'C1',
      trigger_id: 't',
    }).toString();
    const bad = await hh.slack.send(body, 'application/x-www-form-urlencoded', {
      signature: 'v0=deadbeef',
    });
    expect(bad.status).toBe(401);
    const stale = await hh.slack.send(body, 'application/x-www-form-urlencoded', {
      timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    expect(stale.status).toBe(401);
    expect(hh.workspace.callsOf('views.open')).toEqual([]);
  });

  it('answers /healthz with 200 once serving', async () => {
    const hh = await harness();
    const response = await fetch(`http://127.0.0.1:${hh.app.port}/healthz`);
    expect(response.status).toBe(200);
  });

  it('logs one line per request and never a secret', async () => {
    const hh = await harness();
    await hh.startApproval();
    // The submission's line is written once its handler has shown the outcome.
    const requests = await waitFor(() => {
      const lines = hh.logs.entries().filter((e) => e.msg === 'slack request');
      return lines.some((l) => l.kind === 'view_submission') && lines;
    });
    expect(requests.map((r) => r.kind)).toEqual(
      expect.arrayContaining(['/approve', 'view_submission']),
    );
    const all = hh.logs.lines.join('\n');
    for (const secret of [
      hh.env.SLACK_BOT_TOKEN,
      hh.env.SLACK_SIGNING_SECRET,
      hh.env.APPROVAL_APP_KEY,
    ]) {
      expect(all).not.toContain(secret);
    }
  });
});
