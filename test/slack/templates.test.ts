import { describe, expect, it } from 'vitest';
import type { View } from '../../src/sandbox/workspace.ts';
import { openDatabase } from '../../src/store/database.ts';
import { createTemplateStore } from '../../src/store/template-store.ts';
import { type Harness, harnessPerTest, isRequestMessage, waitFor } from '../helpers/harness.ts';
import { openTemplates, pickTemplate } from '../helpers/template-forms.ts';

// Request templates (/approve templates, and the form's template picker), through the app's HTTP
// endpoint with signed requests; Slack is the workspace stand-in, which enforces Block Kit limits.

const harness = harnessPerTest();
const SAM = 'sam.taylor@corp.example';
const LI = 'li.wei@corp.example';
const NOW = new Date('2026-11-25T10:00:00Z');

const text = (x: unknown) => JSON.stringify(x ?? {});
type Block = { block_id?: string; type: string };
const blocksOf = (view: View | undefined) => (view?.view.blocks as Block[] | undefined) ?? [];
const blockOf = (view: View | undefined, id: string) =>
  text(blocksOf(view).find((b) => b.block_id === id) ?? null);

/** Presses a button of an open modal and waits until the modal has changed. */
async function press(hh: Harness, login: string, view: View, actionId: string, value?: string) {
  const hash = hh.workspace.views.get(view.id)?.hash;
  const response = await hh.slack.blockAction(
    hh.user(login),
    { action_id: actionId, ...(value ? { value } : {}) },
    { viewId: view.id },
  );
  expect(response.status).toBe(200);
  await waitFor(() => hh.workspace.views.get(view.id)?.hash !== hash, 5000, `${actionId} answered`);
  return hh.workspace.views.get(view.id) as View;
}

/** Sam's editor for a new template, left open across a restart: nothing (membership, people) is cached. */
async function editorAfterRestart(hh: Harness) {
  const editor = await press(hh, SAM, await openTemplates(hh, SAM), 'template_add');
  await hh.restart();
  return editor;
}

interface Fields {
  name: string;
  prefix?: string;
  skeleton?: string;
  approver?: string;
}

const inputs = (f: Fields) => ({
  template_name_input: f.name,
  template_prefix_input: f.prefix ?? '',
  template_skeleton_input: f.skeleton ?? '',
  ...(f.approver ? { template_approver_select: f.approver } : {}),
});

/** Adds a template through the templates modal; returns the modal after the save. */
async function addTemplate(hh: Harness, login: string, fields: Fields, channel = 'general') {
  const list = await openTemplates(hh, login, channel);
  const editor = await press(hh, login, list, 'template_add');
  expect(editor.view.callback_id).toBe('request_template_edit');
  const { errors } = await hh.slack.submitView(editor.id, inputs(fields));
  expect(errors).toBeUndefined();
  return hh.workspace.views.get(editor.id) as View;
}

const templateIdIn = (view: View, name: string) => {
  const section = blocksOf(view).find(
    (b) => b.type === 'section' && text(b).includes(`*${name}*`),
  ) as { accessory?: { value?: string } } | undefined;
  return section?.accessory?.value ?? '';
};

describe('/approve templates', () => {
  it('opens the channel’s templates for a member, and records who added and edited each', async () => {
    const hh = await harness({ now: () => NOW });
    const empty = await openTemplates(hh, SAM);
    expect(text(empty.view)).toContain('0 of at most 20');
    expect(text(empty.view)).toContain('No templates yet.');

    const saved = await addTemplate(hh, SAM, {
      name: 'Access request',
      prefix: '[Access]',
      skeleton: 'System:\nWhy:',
      approver: hh.user('olivia.brown@corp.example'),
    });
    expect(saved.view.callback_id).toBe('request_templates');
    expect(text(saved.view)).toContain('*Access request*');
    expect(text(saved.view)).toContain(`Added by <@${hh.user(SAM)}> on 25 Nov`);
    expect(text(saved.view)).toContain(`Approver: <@${hh.user('olivia.brown@corp.example')}>`);
    // The list shows what each template's note starts as.
    expect(text(saved.view)).toContain('Note starts as:\\n>System:\\n>Why:');

    // Someone else in the channel edits it.
    const list = await openTemplates(hh, LI);
    const editor = await press(hh, LI, list, 'template_edit', templateIdIn(list, 'Access request'));
    expect(text(editor.view)).toContain('"initial_value":"[Access]"');
    const { errors } = await hh.slack.submitView(editor.id, {
      template_name_input: 'Access',
      template_prefix_input: '[Access]',
      template_skeleton_input: 'System:',
    });
    expect(errors).toBeUndefined();
    const after = hh.workspace.views.get(editor.id) as View;
    expect(text(after.view)).toContain('*Access*');
    // Li Wei reads Chinese: the modal is in Chinese, with who did what.
    expect(text(after.view)).toContain('申请模板');
    expect(text(after.view)).toContain(`<@${hh.user(LI)}> 于 11月25日 修改`);
    expect(text(after.view)).toContain(`<@${hh.user(LI)}> 修改了 *Access*`);
  });

  it('refuses bad input with field errors and stores nothing: no name, too long, a name taken, past the limit', async () => {
    const hh = await harness();
    await addTemplate(hh, SAM, { name: 'Purchase' });
    const list = await openTemplates(hh, SAM);
    const editor = await press(hh, SAM, list, 'template_add');
    const bad = await hh.slack.submitView(editor.id, {
      template_name_input: '  ',
      template_prefix_input: 'x'.repeat(101),
      template_skeleton_input: 'y'.repeat(2001),
    });
    expect(bad.errors).toEqual({
      template_name: 'Please give it a name.',
      template_prefix: 'Too long: 101 characters, at most 100.',
      template_skeleton: 'Too long: 2001 characters, at most 2000.',
    });
    const taken = await hh.slack.submitView(editor.id, { template_name_input: 'purchase' });
    expect(taken.errors).toEqual({
      template_name: 'This channel already has a template of that name.',
    });
    const bot = await hh.slack.submitView(editor.id, {
      template_name_input: 'Bot',
      template_approver_select: hh.workspace.botUserId,
    });
    expect(bot.errors).toEqual({ template_approver: 'Choose a person, not an app.' });
    // As the request form warns about a deactivated approver, so does the editor, and it saves nothing.
    const gone = await hh.slack.submitView(editor.id, {
      template_name_input: 'Billing',
      template_approver_select: hh.user('gao.yu@corp.example'),
    });
    expect(gone.errors?.template_approver).toContain('Slack account is deactivated');
    // Every request from it would go to someone the approval service has never heard of.
    const personal = hh.workspace.users.get(hh.user('chen.hao@corp.example'));
    if (!personal) throw new Error('no Slack user for chen.hao');
    personal.email = 'chen@personal.example';
    const unknown = await hh.slack.submitView(editor.id, {
      template_name_input: 'Outside',
      template_approver_select: personal.id,
    });
    expect(unknown.errors?.template_approver).toContain(
      'The approval service does not know chen@personal.example',
    );
    const names = text(await openTemplates(hh, SAM));
    expect(names).toContain('1 of at most 20');

    for (let i = 2; i <= 20; i++) await addTemplate(hh, SAM, { name: `T${i}` });
    const full = await openTemplates(hh, SAM);
    expect(text(full.view)).toContain('20 of at most 20');
    expect(text(full.view)).not.toContain('template_add');
    expect(text(full.view)).toContain('remove one to add another');
  });

  it('removes a template after Slack’s confirmation, and shows who removed it', async () => {
    const hh = await harness({ now: () => NOW });
    const saved = await addTemplate(hh, SAM, { name: 'Purchase' });
    const id = templateIdIn(saved, 'Purchase');
    const editor = await press(hh, SAM, saved, 'template_edit', id);
    const remove = blocksOf(editor).find((b) => b.type === 'actions');
    expect(text(remove)).toContain('"confirm"');
    const after = await press(hh, LI, editor, 'template_remove', id);
    expect(text(after.view)).toContain('0 个（最多 20 个）');
    expect(text(after.view)).toContain(`<@${hh.user(LI)}> 删除了 *Purchase*`);
  });

  it('answers in a DM, in a channel the app is not in, and to someone not in the channel, only to them, and opens nothing', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    const opens = () => hh.workspace.callsOf('views.open').length;
    const before = opens();
    const dm = hh.workspace.appDm(sam).id;
    await hh.slack.command(sam, dm, 'templates');
    const toSam = () => hh.workspace.messages.filter((m) => m.ephemeralTo === sam);
    await waitFor(() => toSam().length === 1, 5000, 'the DM answer');
    expect(toSam()[0]?.text).toContain('Templates belong to a channel.');

    await hh.slack.command(sam, hh.channel('random'), 'templates');
    await waitFor(() => toSam().length === 2, 5000, 'the answer in #random');
    expect(toSam()[1]?.text).toContain('The app is not in <#');

    const ops = hh.workspace.addChannel(
      'ops',
      'public',
      new Set([hh.workspace.botUserId, hh.user(LI)]),
    );
    await hh.slack.command(sam, ops.id, 'templates');
    await waitFor(() => toSam().length === 3, 5000, 'the answer to a stranger');
    expect(toSam()[2]?.text).toContain(`Only members of <#${ops.id}> may change its templates.`);
    expect(opens()).toBe(before);
  });

  it('opens the templates of a channel the app was just invited to, within a second of the invite', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    const random = hh.channel('random');
    hh.workspace.channels.get(random)?.members.add(sam);
    const toSam = () => hh.workspace.messages.filter((m) => m.ephemeralTo === sam);
    await hh.slack.command(sam, random, 'templates');
    await waitFor(() => toSam().length === 1, 5000, 'the answer before the invite');
    expect(toSam()[0]?.text).toContain('The app is not in <#');

    // `/invite @Approvals`: Slack adds the app and sends it member_joined_channel.
    const invited = Date.now();
    await hh.slack.invite(sam, random, hh.workspace.botUserId);
    const modal = await openTemplates(hh, SAM, 'random');
    expect(Date.now() - invited).toBeLessThan(1000);
    expect(text(modal.view)).not.toContain('The app is not in');
    expect(toSam()).toHaveLength(1);
  });

  it('lets only workspace admins and owners change templates with TEMPLATE_MANAGERS=admins', async () => {
    const hh = await harness({ env: { TEMPLATE_MANAGERS: 'admins' } });
    const sam = hh.user(SAM);
    const toSam = () => hh.workspace.messages.filter((m) => m.ephemeralTo === sam);
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.command(sam, hh.channel('general'), 'templates');
    await waitFor(() => toSam().length === 1, 5000, 'the refusal');
    expect(toSam()[0]?.text).toContain('only its admins and owners may change request templates');
    expect(hh.workspace.callsOf('views.open')).toHaveLength(opens);

    // Tom Baker is a workspace admin (users.info is_admin), Zhou Lan its owner.
    const saved = await addTemplate(hh, 'tom.baker@corp.example', { name: 'Purchase' });
    expect(text(saved.view)).toContain('*Purchase*');
    const owner = await openTemplates(hh, 'zhou.lan@corp.example');
    expect(text(owner.view)).toContain('*Purchase*');
    // Everyone in the channel is still offered them in the form.
    const form = await hh.openModal(SAM);
    expect(text(form.view)).toContain('Purchase');
  });

  it('with TEMPLATE_MANAGERS=admins refuses an admin who left the channel, on opening and on saving', async () => {
    const hh = await harness({ env: { TEMPLATE_MANAGERS: 'admins' } });
    const TOM = 'tom.baker@corp.example';
    const list = await openTemplates(hh, TOM);
    const editor = await press(hh, TOM, list, 'template_add');
    hh.workspace.channels.get(hh.channel('general'))?.members.delete(hh.user(TOM));
    await hh.restart(); // a fresh app: the channel's member list is read again
    const { errors } = await hh.slack.submitView(editor.id, inputs({ name: 'Rerouted' }));
    expect(errors).toBeUndefined();
    expect(text(hh.workspace.views.get(editor.id)?.view)).toContain(
      'only its admins and owners may change request templates, each in the channels they are members of',
    );
    // Nor can the admin open them again; nothing was stored.
    const tom = hh.user(TOM);
    const toTom = () => hh.workspace.messages.filter((m) => m.ephemeralTo === tom);
    await hh.slack.command(tom, hh.channel('general'), 'templates');
    await waitFor(() => toTom().length === 1, 5000, 'the refusal');
    expect(toTom()[0]?.text).toContain('each in the channels they are members of');
    expect(text((await openTemplates(hh, 'zhou.lan@corp.example')).view)).not.toContain('Rerouted');
  });

  it('checks again on save that the person is still in the channel', async () => {
    const hh = await harness();
    const list = await openTemplates(hh, SAM);
    const editor = await press(hh, SAM, list, 'template_add');
    hh.workspace.channels.get(hh.channel('general'))?.members.delete(hh.user(SAM));
    await hh.restart(); // a fresh app: the channel's member list is read again
    const { errors } = await hh.slack.submitView(editor.id, inputs({ name: 'Sneaky' }));
    expect(errors).toBeUndefined();
    expect(text(hh.workspace.views.get(editor.id)?.view)).toContain('Only members of <#');
    // Nothing was stored.
    expect(text((await openTemplates(hh, LI)).view)).toContain('还没有模板。');
  });

  it('shows typed text as typed: escaped in mrkdwn, never a mention', async () => {
    const hh = await harness();
    const saved = await addTemplate(hh, SAM, {
      name: '<!channel> & *x*',
      prefix: '<@U0NOBODY> <b>',
    });
    const shown = text(saved.view);
    expect(shown).toContain('&lt;!channel&gt; &amp; *x*');
    expect(shown).toContain('&lt;@U0NOBODY&gt; &lt;b&gt;');
    expect(shown).not.toContain('<!channel>');
  });

  it('is named in /approve help, in English and Chinese', async () => {
    const hh = await harness();
    const en = await hh.slack.command(hh.user(SAM), hh.channel('general'), 'help');
    expect(String(en.json?.text)).toContain('*/approve templates*');
    await hh.openModal(LI);
    const zh = await hh.slack.command(hh.user(LI), hh.channel('general'), 'help');
    expect(String(zh.json?.text)).toContain('*/approve templates* — 本频道的申请模板');
  });
});

describe('the form’s template picker', () => {
  it('offers the channel’s templates, and a pick fills in the prefix, the skeleton and the approver (away-aware)', async () => {
    const hh = await harness({ now: () => NOW });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), {
      text: 'Vacation',
      emoji: ':palm_tree:',
      expiresAt: Date.parse('2026-12-03T02:00:00Z'),
    });
    const saved = await addTemplate(hh, SAM, {
      name: 'Access request',
      prefix: '[Access]',
      skeleton: 'System:\nWhy:',
      approver: hh.user('olivia.brown@corp.example'),
    });
    const id = templateIdIn(saved, 'Access request');
    const form = await hh.openModal(SAM, 'general', 'VPN');
    expect(blockOf(form, 'template')).toContain('"text":"Access request"');
    const filled = await pickTemplate(hh, SAM, form, id);
    const shown = text(filled.view);
    expect(blockOf(filled, 'title.1')).toContain('"initial_value":"[Access] VPN"');
    expect(blockOf(filled, 'note.1')).toContain('"initial_value":"System:\\nWhy:"');
    expect(blockOf(filled, 'approver.1')).toContain(
      `"initial_user":"${hh.user('olivia.brown@corp.example')}"`,
    );
    expect(blockOf(filled, 'approver_notice')).toContain('Olivia Brown is away until 3 Dec');
    expect(blockOf(filled, 'approver_notice')).toContain('The next leader up is Chen Hao.');
    expect(blockOf(filled, 'template_notice')).toContain(
      'Filled in from the template *Access request*',
    );
    expect(shown).toContain('"initial_option"');

    // Submitted as it is: the request message says which template it came from.
    const { errors } = await hh.slack.submitView(filled.id, {});
    expect(errors).toBeUndefined();
    const approval = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    expect(approval.title).toBe('[Access] VPN');
    expect(approval.approver).toBe('olivia.brown@corp.example');
    const message = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
      5000,
      'the request message',
    );
    expect(text(message.blocks)).toContain('From template *Access request*');
    // Still named once the message is re-rendered with the decision.
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    const decided = await waitFor(() => {
      const m = hh.workspace.messages.find((x) => x.ts === message.ts);
      return m && text(m.blocks).includes('Approved') ? m : undefined;
    });
    expect(text(decided.blocks)).toContain('From template *Access request*');
  });

  it('keeps a note the person wrote, and swaps the prefix when another template is picked', async () => {
    const hh = await harness();
    await addTemplate(hh, SAM, { name: 'Access', prefix: '[Access]', skeleton: 'System:' });
    const saved = await addTemplate(hh, SAM, {
      name: 'Purchase',
      prefix: '[Purchase]',
      skeleton: 'Item:',
    });
    const form = await hh.openModal(SAM, 'general', 'Chairs');
    const first = await pickTemplate(hh, SAM, form, templateIdIn(saved, 'Access'), {
      note_input: 'My own words',
    });
    expect(blockOf(first, 'note.1')).toContain('"initial_value":"My own words"');
    expect(blockOf(first, 'template_notice')).toContain('Your note was kept as you wrote it');
    const second = await pickTemplate(hh, SAM, first, templateIdIn(saved, 'Purchase'));
    expect(blockOf(second, 'title.2')).toContain('"initial_value":"[Purchase] Chairs"');
    expect(blockOf(second, 'note.2')).toContain('"initial_value":"My own words"');
    // The maintainer's suggestion stays when the template names no approver.
    expect(blockOf(second, 'approver.2')).toContain(
      `"initial_user":"${hh.user('maria.lopez@corp.example')}"`,
    );
    const { errors } = await hh.slack.submitView(second.id, { note_input: 'Four chairs' });
    expect(errors).toBeUndefined();
    const approval = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    expect(approval.title).toBe('[Purchase] Chairs');
  });

  it('fills the form in Chinese, and escapes a template name on the request message', async () => {
    const hh = await harness();
    const saved = await addTemplate(hh, LI, {
      name: '请假 <!channel> & co',
      prefix: '【请假】',
      skeleton: '开始日期：',
    });
    const form = await hh.openModal(LI, 'general', '年假');
    expect(blockOf(form, 'template')).toContain('从模板开始…');
    const filled = await pickTemplate(
      hh,
      LI,
      form,
      templateIdIn(saved, '请假 &lt;!channel&gt; &amp; co'),
    );
    expect(blockOf(filled, 'title.1')).toContain('"initial_value":"【请假】 年假"');
    expect(blockOf(filled, 'template_notice')).toContain(
      '已按模板 *请假 &lt;!channel&gt; &amp; co* 填写',
    );
    await hh.slack.submitView(filled.id, {});
    const approval = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    const message = await waitFor(() =>
      hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    );
    expect(text(message.blocks)).toContain('From template *请假 &lt;!channel&gt; &amp; co*');
    expect(text(message)).not.toContain('<!channel>');
  });

  it('offers no templates in a DM, and ignores a pick of another channel’s template', async () => {
    const hh = await harness();
    hh.workspace.addChannel('ops', 'public', new Set([hh.workspace.botUserId, hh.user(SAM)]));
    const elsewhere = await addTemplate(hh, SAM, { name: 'Ops only', prefix: '[Ops]' }, 'ops');
    const opsId = templateIdIn(elsewhere, 'Ops only');
    await addTemplate(hh, SAM, { name: 'General', prefix: '[General]' });
    const form = await hh.openModal(SAM, 'general', 'Thing');
    expect(blockOf(form, 'template')).toContain('"text":"General"');
    expect(blockOf(form, 'template')).not.toContain('Ops only');
    // A forged pick of #ops's template in #general's form (the option slipped into the view as
    // a modified client would send it): not applied, and the form says so.
    const picker = blocksOf(form).find((b) => b.block_id === 'template') as unknown as {
      element: { options: unknown[] };
    };
    picker.element.options.push({ text: { type: 'plain_text', text: 'Ops only' }, value: opsId });
    await pickTemplate(hh, SAM, form, opsId);
    const after = await waitFor(() =>
      blockOf(hh.workspace.views.get(form.id), 'template_notice').includes('removed meanwhile')
        ? hh.workspace.views.get(form.id)
        : undefined,
    );
    expect(blockOf(after, 'title.1')).toContain('"initial_value":"Thing"');
    const sam = hh.user(SAM);
    await hh.slack.command(sam, hh.workspace.appDm(sam).id, 'In a DM');
    const dmForm = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) =>
          v.user === sam &&
          text(v.view).includes('In a DM') &&
          text(v.view).includes('"lookup"') &&
          !text(v.view).includes('hourglass'),
      ),
    );
    expect(blockOf(dmForm, 'template')).toBe('{}');
  });
});

describe('/approve templates when Slack is slow or the person has left', () => {
  it('keeps the editor open, with what was typed, while Slack is slow to say who is in the channel, and saves on the next press', async () => {
    const hh = await harness();
    const editor = await editorAfterRestart(hh);
    const lookups = hh.workspace.callsOf('conversations.members').length;
    hh.faults.hang('conversations.members', 3500, { commit: false });
    const typed = inputs({ name: 'Purchase', skeleton: 'Item:\nWhy:' });
    const started = Date.now();
    const first = await hh.slack.submitView(editor.id, typed);
    // Answered within Slack's 3 s, before the app's own 2.5 s safety net would close the modal.
    expect(Date.now() - started).toBeLessThan(2500);
    expect(first.errors).toEqual({
      template_name:
        'Still checking that you are in this channel — press Save again in a moment. Nothing was saved yet.',
    });
    expect(hh.workspace.views.get(editor.id)?.view.callback_id).toBe('request_template_edit');

    // The lookup went on and filled the shared member list: the next press is answered from it.
    await waitFor(
      () => hh.workspace.callsOf('conversations.members').length > lookups,
      6000,
      'the slow lookup',
    );
    const second = await hh.slack.submitView(editor.id, typed);
    expect(second.errors).toBeUndefined();
    const saved = hh.workspace.views.get(editor.id) as View;
    expect(saved.view.callback_id).toBe('request_templates');
    expect(text(saved.view)).toContain('*Purchase*');
    expect(text(saved.view)).toContain('1 of at most 20');
    expect(hh.logs.entries().filter((e) => Number(e.level) >= 50)).toEqual([]);
  });

  it('shows the saved list within Slack’s 3 s even when Slack is slow to describe the person who saved', async () => {
    const hh = await harness();
    const editor = await editorAfterRestart(hh);
    // Membership answers at once; only who Sam is (language, time zone) is slow.
    hh.faults.hang('users.info', 3500, { commit: false });
    const started = Date.now();
    const { errors } = await hh.slack.submitView(editor.id, inputs({ name: 'Purchase' }));
    expect(Date.now() - started).toBeLessThan(2500);
    expect(errors).toBeUndefined();
    const saved = hh.workspace.views.get(editor.id) as View;
    expect(saved.view.callback_id).toBe('request_templates');
    expect(text(saved.view)).toContain('*Purchase*');
    expect(hh.logs.entries().filter((e) => Number(e.level) >= 50)).toEqual([]);
  });

  it('asks for another Save, in the approver field, when Slack is slow to describe the default approver', async () => {
    const hh = await harness();
    const editor = await editorAfterRestart(hh);
    hh.faults.hang('users.info', 3500, { commit: false });
    const started = Date.now();
    const { errors } = await hh.slack.submitView(
      editor.id,
      inputs({ name: 'Access', approver: hh.user('olivia.brown@corp.example') }),
    );
    expect(Date.now() - started).toBeLessThan(2500);
    expect(errors).toEqual({
      template_approver:
        'Still checking this person with Slack — press Save again in a moment. Nothing was saved yet.',
    });
    expect(text((await openTemplates(hh, LI)).view)).toContain('还没有模板。');
  });

  it('keeps the editor, saying so, when Slack cannot tell whether the person is in the channel', async () => {
    const hh = await harness();
    const editor = await editorAfterRestart(hh);
    hh.workspace.failNext('conversations.members', 'internal_error');
    const { errors } = await hh.slack.submitView(editor.id, inputs({ name: 'Purchase' }));
    expect(errors).toEqual({
      template_name:
        'Slack could not tell right now whether you are in this channel, so nothing was opened or changed. Try again in a minute.',
    });
    expect(hh.workspace.views.get(editor.id)?.view.callback_id).toBe('request_template_edit');
  });

  it('does not open the editor of a template for someone who left the channel since opening the list', async () => {
    const hh = await harness();
    const saved = await addTemplate(hh, SAM, { name: 'Salaries', skeleton: 'Only for us' });
    const id = templateIdIn(saved, 'Salaries');
    hh.workspace.channels.get(hh.channel('general'))?.members.delete(hh.user(SAM));
    await hh.restart(); // the channel's member list is read again
    const after = await press(hh, SAM, saved, 'template_edit', id);
    expect(text(after.view)).toContain('Only members of <#');
    expect(text(after.view)).not.toContain('Only for us');
    expect(after.view.callback_id).not.toBe('request_template_edit');
  });

  it('edits only templates of the channel the modal is about, whatever the button or the editor claims', async () => {
    const hh = await harness();
    hh.workspace.addChannel('ops', 'public', new Set([hh.workspace.botUserId, hh.user(LI)]));
    const opsList = await addTemplate(hh, LI, { name: 'Ops', skeleton: 'Ops only' }, 'ops');
    const opsId = templateIdIn(opsList, 'Ops');
    const saved = await addTemplate(hh, SAM, { name: 'General' });

    // An Edit button carrying #ops's template in #general's modal: #general's list again.
    const pressed = await press(hh, SAM, saved, 'template_edit', opsId);
    expect(pressed.view.callback_id).toBe('request_templates');
    expect(text(pressed.view)).toContain('*General*');
    expect(text(pressed.view)).not.toContain('Ops only');

    // #general's editor claiming #ops's template: refused as gone, #ops's template untouched.
    const editor = await press(hh, SAM, pressed, 'template_edit', templateIdIn(pressed, 'General'));
    const claimed = hh.workspace.views.get(editor.id) as View;
    const metadata = JSON.parse(String(claimed.view.private_metadata));
    claimed.view.private_metadata = JSON.stringify({ ...metadata, templateId: opsId });
    const { errors } = await hh.slack.submitView(editor.id, inputs({ name: 'Hijacked' }));
    expect(errors).toEqual({
      template_name: 'This template was removed meanwhile; close this and add it again.',
    });
    const ops = text((await openTemplates(hh, LI, 'ops')).view);
    expect(ops).toContain('*Ops*');
    expect(ops).not.toContain('Hijacked');
  });
});

describe('the form’s template picker, for whom and after what', () => {
  it('offers a private channel’s templates only to its members: not on a Request again after leaving, nor by a forged pick', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    const hr = hh.workspace.addChannel(
      'hr',
      'private',
      new Set([hh.workspace.botUserId, sam, hh.user(LI)]),
    );
    const { approval } = await hh.startApproval(SAM, 'hr', 'Old thing');
    hh.sim.decide(approval.djbh, 'refuse');
    await hh.app.poll();
    hr.members.delete(sam);
    await hh.restart(); // the channel's member list is read again
    const saved = await addTemplate(
      hh,
      LI,
      { name: 'Salary review', prefix: '[Salary]', skeleton: 'CONFIDENTIAL skeleton' },
      'hr',
    );
    const id = templateIdIn(saved, 'Salary review');

    // "Request again" opens the form on #hr for Sam, who has left it: no templates.
    await hh.slack.blockAction(sam, { action_id: 'request_again', value: approval.djbh });
    const form = await waitFor(
      () =>
        [...hh.workspace.views.values()].find(
          (v) =>
            v.user === sam &&
            text(v.view).includes('Old thing') &&
            text(v.view).includes('"lookup"') &&
            !text(v.view).includes('hourglass'),
        ),
      8000,
      'the filled form',
    );
    expect(blockOf(form, 'template')).toBe('{}');
    expect(text(form.view)).not.toContain('Salary review');

    // A pick of #hr's template anyway (the picker slipped into the view, as a modified client
    // would send it): nothing is filled in, and the form says why.
    const blocks = form.view.blocks as Array<Record<string, unknown>>;
    blocks.unshift({
      type: 'input',
      block_id: 'template',
      optional: true,
      dispatch_action: true,
      label: { type: 'plain_text', text: 'Template' },
      element: {
        type: 'static_select',
        action_id: 'template_select',
        options: [{ text: { type: 'plain_text', text: 'Salary review' }, value: id }],
      },
    });
    const after = await pickTemplate(hh, SAM, form, id);
    expect(text(after.view)).not.toContain('CONFIDENTIAL');
    expect(text(after.view)).not.toContain('[Salary]');
    expect(text(after.view)).toContain(`The templates of <#${hr.id}> are for its members`);
    expect(blockOf(after, 'title.1')).toContain('"initial_value":"Old thing"');
  });

  it('names no template on the request when the template’s fill lost its race with an approver pick', async () => {
    const hh = await harness();
    const olivia = hh.user('olivia.brown@corp.example');
    const maria = hh.user('maria.lopez@corp.example');
    const saved = await addTemplate(hh, SAM, {
      name: 'Access',
      prefix: '[Access]',
      skeleton: 'System:',
      approver: olivia,
    });
    const id = templateIdIn(saved, 'Access');
    await hh.restart(); // people are looked up afresh, so a slow users.info slows the fill
    const form = await hh.openModal(SAM, 'general', 'VPN');
    const updates = hh.workspace.callsOf('views.update').length;
    // The template's fill asks Slack about its approver (not looked up since the restart), slowly;
    // a pick of Maria Lopez (looked up by the form already), its payload carrying the template the
    // picker shows, is redrawn first.
    hh.faults.hang('users.info', 1500, { commit: false });
    const templatePick = hh.slack.selectOption(hh.user(SAM), form.id, 'template_select', id, {});
    const approverPick = hh.slack.selectUser(hh.user(SAM), form.id, 'approver_select', maria, {
      template_select: id,
    });
    await Promise.all([templatePick, approverPick]);
    const lost = await waitFor(
      () => {
        const answered = hh.workspace.callsOf('views.update').slice(updates);
        const errors = answered.map((c) => (c.response as { error?: string }).error ?? 'ok');
        return answered.length >= 2 ? errors : undefined;
      },
      6000,
      'both updates answered',
    );
    expect(lost).toEqual(['ok', 'hash_conflict']);

    // The picker shows what was applied (nothing), not the lost pick; the fields are as typed.
    const now = hh.workspace.views.get(form.id) as View;
    const picker = blocksOf(now).find((b) => text(b).includes('"template_select"'));
    expect(text(picker)).not.toContain('initial_option');
    expect(blockOf(now, 'template_notice')).toBe('{}');
    expect(text(now.view)).not.toContain('[Access] VPN');
    expect(text(now.view)).toContain(`"initial_user":"${maria}"`);

    // Submitted with the picker still showing the lost pick (as a client that kept it would send
    // it): the approval is made, and its message names no template.
    const { errors } = await hh.slack.submitView(form.id, {
      template_select: id,
      note_input: 'Typed myself',
    });
    expect(errors).toBeUndefined();
    const approval = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    expect(approval.title).toBe('VPN');
    expect(approval.approver).toBe('maria.lopez@corp.example');
    const message = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
      5000,
      'the request message',
    );
    expect(text(message.blocks)).not.toContain('From template');
  });
});

describe('template limits, counted on the text as it is sent', () => {
  it('refuses a title prefix and a skeleton whose emoji, written as :name: codes for the service, pass their limits', async () => {
    const hh = await harness();
    const editor = await press(hh, SAM, await openTemplates(hh, SAM), 'template_add');
    // Ten characters as typed, 220 as the service stores them (`:closed_lock_with_key:`).
    const { errors } = await hh.slack.submitView(editor.id, {
      template_name_input: 'Locked',
      template_prefix_input: '🔐'.repeat(10),
      template_skeleton_input: '🔐'.repeat(100),
    });
    expect(errors).toEqual({
      template_prefix:
        'Too long as the approval service stores it (emoji become :name: codes): 220 characters, at most 100.',
      template_skeleton:
        'Too long as the approval service stores it (emoji become :name: codes): 2200 characters, at most 2000.',
    });
  });

  it('names the template, not the person’s title, when a template saved before makes the title too long', async () => {
    const hh = await harness();
    // Saved by an earlier release, which counted the prefix as typed.
    const db = await openDatabase(hh.env.DATABASE_URL);
    let id = '';
    try {
      const added = await createTemplateStore(db.db, db.dialect).add(
        hh.channel('general'),
        { name: 'Locked', titlePrefix: '🔐'.repeat(10), noteSkeleton: '', approverChatId: null },
        hh.user(SAM),
        new Date(),
      );
      if (!added.ok) throw new Error('not added');
      id = added.template.id;
    } finally {
      await db.close();
    }
    const form = await hh.openModal(SAM, 'general', 'VPN');
    const filled = await pickTemplate(hh, SAM, form, id);
    const { errors } = await hh.slack.submitView(filled.id, { note_input: 'For the new hire.' });
    expect(errors).toEqual({
      'title.1':
        'The template “Locked” makes the title too long for the approval service: its title prefix is 220 characters as sent (emoji become :name: codes), at most 100. Pick no template, or ask a channel member to shorten it (/approve templates).',
    });
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('opens the editor of a template named with 50 ampersands: its Remove confirmation fits once escaped', async () => {
    const hh = await harness();
    const name = '&'.repeat(50);
    const saved = await addTemplate(hh, SAM, { name });
    const id = templateIdIn(saved, '&amp;'.repeat(50));
    expect(id).not.toBe('');
    const editor = await press(hh, SAM, saved, 'template_edit', id);
    expect(editor.view.callback_id).toBe('request_template_edit');
    const confirm = text(blocksOf(editor).find((b) => b.type === 'actions'));
    expect(confirm).toContain('Remove *&amp;&amp;');
  });
});
