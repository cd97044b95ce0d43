import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.ts';
import { type Harness, harnessPerTest, isRequestMessage, waitFor } from '../helpers/harness.ts';
import { addTemplate, pickTemplate } from '../helpers/template-forms.ts';

// "Request again", through the app's HTTP endpoint with signed requests.

const harness = harnessPerTest();
const SAM = 'sam.taylor@corp.example';

const text = (x: unknown) => JSON.stringify(x ?? {});
const againButton = (blocks: unknown) =>
  text(blocks).includes('"action_id":"request_again"') && text(blocks).includes('Request again');

async function rejected(hh: Harness) {
  const started = await hh.startApproval(SAM);
  hh.sim.decide(started.approval.djbh, 'refuse');
  await hh.app.poll();
  const parent = await waitFor(
    () => {
      const m = hh.workspace.messages.find((x) => x.ts === started.parent.ts);
      return m && text(m.blocks).includes('Rejected') ? m : undefined;
    },
    5000,
    'the request message showing the rejection',
  );
  return { djbh: started.approval.djbh, parent };
}

async function openHome(hh: Harness, login: string) {
  const userId = hh.user(login);
  const before = hh.workspace.callsOf('views.publish').length;
  await hh.slack.event({ type: 'app_home_opened', user: userId, channel: 'D0HOME', tab: 'home' });
  await waitFor(() => hh.workspace.callsOf('views.publish').length > before, 5000, 'Home');
  return hh.workspace.homes.get(userId);
}

describe('request again', () => {
  it('offers Request again on a rejected request, and not while it runs or once approved', async () => {
    const hh = await harness();
    const running = await hh.startApproval(SAM);
    expect(againButton(running.parent.blocks)).toBe(false);
    const { parent } = await rejected(hh);
    expect(againButton(parent.blocks)).toBe(true);

    const approved = await hh.startApproval(SAM, 'general', 'Approved one');
    hh.sim.decide(approved.approval.djbh, 'agree');
    await hh.app.poll();
    const after = await waitFor(() => {
      const m = hh.workspace.messages.find((x) => x.ts === approved.parent.ts);
      return m && text(m.blocks).includes('Approved') ? m : undefined;
    });
    expect(againButton(after.blocks)).toBe(false);
  });

  it('opens the form with the old title and note, suggests the approver afresh (away-aware), and links the new request to the old one', async () => {
    const hh = await harness();
    const { djbh, parent } = await rejected(hh);
    // Since then, the nearest leader went on holiday.
    hh.workspace.setStatus(hh.user('maria.lopez@corp.example'), {
      text: 'Holiday',
      emoji: ':palm_tree:',
      expiresAt: Date.now() + 5 * 86_400_000,
    });
    await hh.restart(); // profiles are cached for ten minutes; a fresh app reads them now
    const opens = hh.workspace.callsOf('views.open').length;
    const response = await hh.slack.blockAction(
      hh.user(SAM),
      { action_id: 'request_again', value: djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    expect(response.status).toBe(200);
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === hh.user(SAM) && text(v.view).includes('approver_notice'),
      ),
    );
    const form = text(view.view);
    expect(form).toContain('"initial_value":"New storage node"');
    expect(form).toContain('"initial_value":"For the Q3 expansion"');
    expect(form).toContain(`"initial_user":"${hh.user('chen.hao@corp.example')}"`);
    expect(form).toContain('Maria Lopez is away until');

    await hh.slack.submitView(view.id, {});
    const again = await waitFor(() => hh.sim.approvals()[1], 5000, 'the new approval');
    expect(again.approver).toBe('chen.hao@corp.example');
    const message = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, again.djbh)),
      5000,
      'the new request message',
    );
    const permalink = `https://sandbox.slack.local/archives/${parent.channel}/p${parent.ts.replace('.', '')}`;
    expect(text(message.blocks)).toContain(`Requested again after <${permalink}|${djbh}>.`);
  });

  it('says when the earlier note is longer than the form holds, instead of cutting it without a word; the field says its limit', async () => {
    const hh = await harness();
    const { djbh, parent } = await rejected(hh);
    // A workflow step's note is limited by no field: this one has 4,500 characters.
    const long = `${'Background. '.repeat(375)}`;
    expect([...long]).toHaveLength(4500);
    const db = await openDatabase(hh.env.DATABASE_URL);
    await db.db
      .updateTable('tracked_approvals')
      .set({ note: long })
      .where('djbh', '=', djbh)
      .execute();
    await db.close();
    await hh.slack.blockAction(
      hh.user(SAM),
      { action_id: 'request_again', value: djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === hh.user(SAM) && text(v.view).includes('Suggested approver'),
      ),
    );
    const form = text(view.view);
    expect(form).toContain('What is to be approved, and why. Up to 3,000 characters.');
    expect(form).toContain(
      'The earlier note has 4,500 characters and this field holds 3,000, so only its first 3,000 are filled in above.',
    );
    expect(form).toContain(`"initial_value":"${long.slice(0, 3000)}"`);
  });

  it('reopens a request made from a template with that template and its approver (away-aware), not the org chart’s leader', async () => {
    const hh = await harness();
    const priya = hh.user('priya.nair@corp.example');
    const id = await addTemplate(hh, SAM, { name: 'Travel', prefix: '[Travel]', approver: priya });
    const form = await hh.openModal(SAM, 'general', 'Berlin, 3 days');
    const filled = await pickTemplate(hh, SAM, form, id);
    const { errors } = await hh.slack.submitView(filled.id, { note_input: 'Customer visit' });
    expect(errors).toBeUndefined();
    const first = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    expect(first.approver).toBe('priya.nair@corp.example');
    const parent = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, first.djbh)),
      5000,
      'the request message',
    );
    hh.sim.decide(first.djbh, 'refuse');
    await hh.app.poll();
    // Since then, Priya went on holiday.
    hh.workspace.setStatus(priya, {
      text: 'Holiday',
      emoji: ':palm_tree:',
      expiresAt: Date.now() + 5 * 86_400_000,
    });
    await hh.restart(); // profiles are cached for ten minutes; a fresh app reads them now
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(
      hh.user(SAM),
      { action_id: 'request_again', value: first.djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) =>
          v.user === hh.user(SAM) &&
          v.id !== filled.id &&
          text(v.view).includes('[Travel] Berlin') &&
          !text(v.view).includes('hourglass'),
      ),
    );
    const shown = text(view.view);
    expect(shown).toContain(`"initial_user":"${priya}"`);
    expect(shown).toContain('Priya Nair is away until');
    expect(shown).toContain('"initial_option":{"text":{"type":"plain_text","text":"Travel"}');
    expect(shown).toContain('Filled in from the template *Travel*');

    await hh.slack.submitView(view.id, {});
    const again = await waitFor(() => hh.sim.approvals()[1], 5000, 'the new approval');
    expect(again.approver).toBe('priya.nair@corp.example');
    expect(again.title).toBe('[Travel] Berlin, 3 days');
    const message = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, again.djbh)),
      5000,
      'the new request message',
    );
    expect(text(message.blocks)).toContain('From template *Travel*');
  });

  it('finds the template by its name for a request recorded before template ids were', async () => {
    const hh = await harness();
    const priya = hh.user('priya.nair@corp.example');
    const id = await addTemplate(hh, SAM, { name: 'Travel', prefix: '[Travel]', approver: priya });
    const form = await pickTemplate(hh, SAM, await hh.openModal(SAM, 'general', 'Oslo'), id);
    await hh.slack.submitView(form.id, { note_input: 'Conference' });
    const first = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    const parent = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, first.djbh)),
      5000,
      'the request message',
    );
    hh.sim.decide(first.djbh, 'refuse');
    await hh.app.poll();
    // As an earlier release recorded it: the template's name only.
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      await db.db
        .updateTable('tracked_approvals')
        .set({ template_id: null })
        .where('djbh', '=', first.djbh)
        .execute();
    } finally {
      await db.close();
    }
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(
      hh.user(SAM),
      { action_id: 'request_again', value: first.djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');
    const opened = hh.workspace.callsOf('views.open')[opens]?.response as {
      view?: { id?: string };
    };
    const view = await waitFor(() => {
      const v = hh.workspace.views.get(opened.view?.id ?? '');
      return v && text(v.view).includes('"lookup"') && !text(v.view).includes('hourglass')
        ? v
        : undefined;
    });
    expect(text(view.view)).toContain('Filled in from the template *Travel*');
    expect(text(view.view)).toContain(`"initial_user":"${priya}"`);
  });

  it('replaces the used Request again button by a link to the new request, so it is requested again only once', async () => {
    const hh = await harness();
    const { djbh, parent } = await rejected(hh);
    const sam = hh.user(SAM);
    /** Presses Request again and returns the form it opened, once filled in. */
    const openAgain = async () => {
      const opens = hh.workspace.callsOf('views.open').length;
      await hh.slack.blockAction(
        sam,
        { action_id: 'request_again', value: djbh },
        { channelId: parent.channel, messageTs: parent.ts },
      );
      await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');
      const opened = hh.workspace.callsOf('views.open')[opens]?.response as {
        view?: { id?: string };
      };
      return waitFor(() => {
        const v = hh.workspace.views.get(opened.view?.id ?? '');
        return v && text(v.view).includes('"lookup"') && !text(v.view).includes('hourglass')
          ? v
          : undefined;
      });
    };
    // Two forms from one button (two tabs, a double click): only the first submitted counts.
    const first = await openAgain();
    const second = await openAgain();
    await hh.slack.submitView(first.id, {});
    const again = await waitFor(() => hh.sim.approvals()[1], 5000, 'the new approval');
    const message = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, again.djbh)),
      5000,
      'the new request message',
    );
    const link = `https://sandbox.slack.local/archives/${message.channel}/p${message.ts.replace('.', '')}`;
    const old = await waitFor(
      () => {
        const m = hh.workspace.messages.find((x) => x.ts === parent.ts);
        return m && text(m.blocks).includes(`Requested again as <${link}|${again.djbh}>.`)
          ? m
          : undefined;
      },
      5000,
      'the old request linking to the new one',
    );
    expect(againButton(old.blocks)).toBe(false);

    await hh.slack.submitView(second.id, {});
    const refused = await waitFor(() => {
      const v = hh.workspace.views.get(second.id);
      return v && text(v.view).includes('already requested again') ? v : undefined;
    });
    expect(text(refused.view)).toContain(again.djbh);
    expect(hh.sim.approvals()).toHaveLength(2);
    // A press on a button still showing (a client not yet refreshed) is told the same.
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(
      sam,
      { action_id: 'request_again', value: djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    const told = await waitFor(
      () => hh.workspace.messages.find((m) => m.ephemeralTo === sam && text(m).includes('already')),
      5000,
      'the answer to a second press',
    );
    expect(told.text).toContain(again.djbh);
    expect(hh.workspace.callsOf('views.open').length).toBe(opens);
    // Nor on the requester's Home any more.
    expect(againButton(await openHome(hh, SAM))).toBe(false);
  });

  it('posts the new request in the requester’s DM, saying why, when they are no longer in the private channel of the first', async () => {
    let offset = 0;
    const hh = await harness({ now: () => new Date(Date.now() + offset) });
    const sam = hh.user(SAM);
    const priya = hh.user('priya.nair@corp.example');
    hh.workspace.addChannel('project-x', 'private', new Set([sam, priya, hh.workspace.botUserId]));
    const first = await hh.startApproval(SAM, 'project-x', 'Termination of J. Doe');
    hh.sim.decide(first.approval.djbh, 'refuse');
    await hh.app.poll();
    // Sam leaves #project-x; the app, still a member, could post there.
    hh.workspace.channelByName('project-x').members.delete(sam);
    offset += 61_000; // past the app's cached member list
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(
      sam,
      { action_id: 'request_again', value: first.approval.djbh },
      { channelId: first.parent.channel, messageTs: first.parent.ts },
    );
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');
    const view = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) =>
          v.user === sam &&
          text(v.view).includes('Termination of J. Doe') &&
          !text(v.view).includes('hourglass'),
      ),
    );
    await hh.slack.submitView(view.id, {});
    const again = await waitFor(() => hh.sim.approvals()[1], 5000, 'the new approval');
    const message = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, again.djbh)),
      5000,
      'the new request message',
    );
    expect(message.channel).toBe(hh.workspace.appDm(sam).id);
    // The old request there drops its button, without naming the new one its members may not see.
    await waitFor(() => {
      const m = hh.workspace.messages.find((x) => x.ts === first.parent.ts);
      return m && text(m.blocks).includes('Requested again.') ? m : undefined;
    });
    const inChannel = hh.workspace.messages.filter(
      (m) => m.channel === hh.channel('project-x') && text(m).includes(again.djbh),
    );
    expect(inChannel).toEqual([]);
    const told = await waitFor(() => {
      const v = hh.workspace.views.get(view.id);
      return v && text(v.view).includes('no longer a member') ? v : undefined;
    });
    expect(text(told.view)).toContain(`<#${hh.channel('project-x')}>`);
  });

  it('lets only the requester request it again, telling anyone else and opening nothing', async () => {
    const hh = await harness();
    const { djbh, parent } = await rejected(hh);
    const li = hh.user('li.wei@corp.example');
    const opens = hh.workspace.callsOf('views.open').length;
    const response = await hh.slack.blockAction(
      li,
      { action_id: 'request_again', value: djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    expect(response.status).toBe(200);
    const told = await waitFor(
      () => hh.workspace.messages.find((m) => m.ephemeralTo === li),
      5000,
      'the answer to the stranger',
    );
    expect(told.text).toContain(`Only <@${hh.user(SAM)}>, who requested it, can request it again.`);
    expect(hh.workspace.callsOf('views.open').length).toBe(opens);
  });

  it('offers it on the requester’s Home for a request nobody decided in time, and opens the form from there', async () => {
    const hh = await harness({ env: { POLL_GIVE_UP_DAYS: '30' } });
    const { approval } = await hh.startApproval(SAM);
    expect(againButton(await openHome(hh, SAM))).toBe(false);
    await hh.app.poll(new Date(Date.now() + 31 * 86_400_000));
    const home = await openHome(hh, SAM);
    expect(againButton(home)).toBe(true);
    expect(text(home)).toContain(`"value":"${approval.djbh}"`);
    // Not on the approver's Home: it is not theirs to request.
    expect(againButton(await openHome(hh, 'maria.lopez@corp.example'))).toBe(false);

    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(hh.user(SAM), { action_id: 'request_again', value: approval.djbh });
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');
  });

  it('is named in /approve help, with the away hint, in English and Chinese', async () => {
    const hh = await harness();
    const en = await hh.slack.command(hh.user(SAM), hh.channel('general'), 'help');
    expect(String(en.json?.text)).toContain('*Request again* on your request that was rejected');
    expect(String(en.json?.text)).toContain('suggests the next leader up');
    await hh.openModal('li.wei@corp.example'); // so the app knows Li Wei reads Chinese
    const zh = await hh.slack.command(
      hh.user('li.wei@corp.example'),
      hh.channel('general'),
      'help',
    );
    expect(String(zh.json?.text)).toContain('*重新发起*');
    expect(String(zh.json?.text)).toContain('建议上一级领导');
  });
});
