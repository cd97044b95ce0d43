import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { View } from '../../src/sandbox/workspace.ts';
import { openDatabase } from '../../src/store/database.ts';
import { createDelegationStore } from '../../src/store/delegation-store.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import {
  openDelegateModal,
  openHome,
  pressOnHome,
  setDelegate,
} from '../helpers/delegate-forms.ts';
import { harnessPerTest, isRequestMessage, waitFor } from '../helpers/harness.ts';
import { addTemplate, pickTemplate } from '../helpers/template-forms.ts';

// Delegates while away, through the app's HTTP endpoint with signed requests: set and cleared on
// App Home, and used by the form's suggestion, a template, a picked approver and the workflow step.

const harness = harnessPerTest();
const NOW = new Date('2026-11-23T10:00:00Z');
const SAM = 'sam.taylor@corp.example';
const MARIA = 'maria.lopez@corp.example';
const ALEX = 'alex.kim@corp.example';
const LI = 'li.wei@corp.example';
const GAO = 'gao.yu@corp.example'; // a deactivated Slack account

const text = (x: unknown) => JSON.stringify(x ?? {});
const blockOf = (view: View | undefined, blockId: string) =>
  JSON.stringify(
    ((view?.view.blocks as Array<{ block_id?: string }> | undefined) ?? []).find(
      (b) => b.block_id === blockId,
    ) ?? null,
  );

describe('a delegate on App Home', () => {
  it('is set with a person and a day, named on Home with what already waits staying, and cleared', async () => {
    const hh = await harness({ now: () => NOW });
    await hh.startApproval(SAM); // one waits for Maria already
    const before = await openHome(hh, MARIA);
    expect(text(before)).toContain('While I am away');
    expect(text(before)).toContain('"action_id":"delegate_open"');

    const { errors, home } = await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    expect(errors).toBeUndefined();
    expect(text(home)).toContain(
      `New requests go to <@${hh.user(ALEX)}> until 3 Dec; the 1 already waiting stays with you`,
    );
    expect(text(home)).toContain('"action_id":"delegate_clear"');
    // What waits for Maria is still hers in the service: nothing was moved.
    expect(hh.sim.approvals()[0]).toMatchObject({ approver: MARIA });

    const cleared = await pressOnHome(hh, MARIA, 'delegate_clear');
    expect(text(cleared)).not.toContain('New requests go to');
    expect(text(cleared)).toContain('"action_id":"delegate_open"');
    const view = await hh.openModal(SAM);
    expect(text(view.view)).toContain(`"initial_user":"${hh.user(MARIA)}"`);
  });

  it('says it in Chinese on a Chinese Home', async () => {
    const hh = await harness({ now: () => NOW });
    await hh.openModal(LI); // so the app knows Li Wei reads Chinese
    const { home } = await setDelegate(hh, LI, SAM, '2026-12-03');
    expect(text(home)).toContain('我不在时');
    // Nothing waits for Li Wei: nothing is said of what stays.
    expect(text(home)).toContain(`12月3日 前，新申请将发给 <@${hh.user(SAM)}>。"`);
  });

  it('refuses yourself, a day that is not after today, and someone the service does not know, beside the field', async () => {
    const hh = await harness({
      now: () => NOW,
      extraSlackUsers: [{ login: 'ghost@corp.example', name: 'Ghost Writer' }],
    });
    expect((await setDelegate(hh, MARIA, MARIA, '2026-12-03')).errors).toEqual({
      delegate_to: 'You cannot be your own delegate; pick someone else.',
    });
    // 23 Nov is today in the person's zone: it would end as it starts.
    for (const day of ['2026-11-20', '2026-11-23'])
      expect((await setDelegate(hh, MARIA, ALEX, day)).errors).toEqual({
        delegate_until: 'Pick a day after today.',
      });
    expect((await setDelegate(hh, MARIA, 'ghost@corp.example', '2026-12-03')).errors).toEqual({
      delegate_to:
        'The approval service does not know Ghost Writer, so they could not decide your requests; pick someone else.',
    });
    // The directory cannot be asked: nothing is set, and the person is told to try again.
    hh.sim.setFaults('department', { html502: true });
    expect((await setDelegate(hh, MARIA, ALEX, '2026-12-03')).errors).toEqual({
      delegate_to:
        'The approval service could not be reached to check your delegate; try again in a moment.',
    });
    const home = await openHome(hh, MARIA);
    expect(text(home)).not.toContain('New requests go to');
  });
  it('refuses an app and a deactivated Slack account as a delegate: requests could never reach them', async () => {
    const hh = await harness({ now: () => NOW });
    const modal = await openDelegateModal(hh, MARIA);
    const save = (who: string) =>
      hh.slack.submitView(modal.id, { delegate_to_select: who, delegate_until_pick: '2026-12-03' });
    expect((await save(hh.workspace.botUserId)).errors).toEqual({
      delegate_to: 'Choose a person, not an app.',
    });
    // Gao Yu's account is deactivated; the service's directory still knows them.
    expect((await save(hh.user(GAO))).errors).toEqual({
      delegate_to:
        'Gao Yu’s Slack account is deactivated, so your requests could not reach them; pick someone else.',
    });
    hh.workspace.closeView(modal.id);
    expect(text(await openHome(hh, MARIA))).not.toContain('New requests go to');
  });

  it('refuses a day more than a year ahead (Home says the day without its year), storing nothing', async () => {
    const hh = await harness({ now: () => NOW });
    for (const day of ['9999-12-31', '2027-12-03'])
      expect((await setDelegate(hh, MARIA, ALEX, day)).errors).toEqual({
        delegate_until: 'Pick a day within a year from today.',
      });
    expect(text(await openHome(hh, MARIA))).not.toContain('New requests go to');
    // A year ahead is still a leave.
    const { errors, home } = await setDelegate(hh, MARIA, ALEX, '2027-11-20');
    expect(errors).toBeUndefined();
    expect(text(home)).toContain(`New requests go to <@${hh.user(ALEX)}> until 20 Nov`);
  });

  it('answers Save within Slack’s 3 s when the service’s directory is slow: nothing set, and says so', async () => {
    // The app's own timeout longer than Slack's 3 s, as in production (10 s by default).
    const hh = await harness({ now: () => NOW, env: { APPROVAL_TIMEOUT_MS: '10000' } });
    const modal = await openDelegateModal(hh, MARIA);
    hh.sim.setFaults('department', { latencyMs: 4000 });
    const first = await hh.slack.submitView(modal.id, {
      delegate_to_select: hh.user(ALEX),
      delegate_until_pick: '2026-12-03',
    });
    // The app's answer, not the 2.5 s safety net's empty one (which would close the modal).
    expect(first.errors).toEqual({
      delegate_to:
        'Still checking your delegate — press Save again in a moment. Nothing was saved yet.',
    });
    expect(hh.workspace.views.get(modal.id)?.view.callback_id).toBe('delegate_while_away');
    expect(text(await openHome(hh, MARIA))).not.toContain('New requests go to');
    // The service answers again: the next press saves.
    hh.sim.clearFaults();
    const published = hh.workspace.callsOf('views.publish').length;
    const second = await hh.slack.submitView(modal.id, {
      delegate_to_select: hh.user(ALEX),
      delegate_until_pick: '2026-12-03',
    });
    expect(second.errors).toBeUndefined();
    await waitFor(
      () => hh.workspace.callsOf('views.publish').length > published,
      5000,
      'Home after Save',
    );
    expect(text(hh.workspace.homes.get(hh.user(MARIA)))).toContain('New requests go to');
  });

  it('Change after a restart shows the day back in the person’s zone, not a day early', async () => {
    const hh = await harness({ now: () => NOW });
    await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    // A new process (another replica): nobody is known yet when Change is pressed on Home.
    await hh.restart();
    const modal = await openDelegateModal(hh, MARIA);
    expect(text(modal.view)).toContain('"initial_date":"2026-12-03"');
    expect(text(modal.view)).toContain(`"initial_user":"${hh.user(ALEX)}"`);
  });
});

describe('new requests for someone away', () => {
  it('the form suggests the nearest leader’s delegate and says why, until the day they are back', async () => {
    let now = NOW;
    const hh = await harness({ now: () => now });
    await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    const view = await hh.openModal(SAM);
    expect(text(view.view)).toContain(`"initial_user":"${hh.user(ALEX)}"`);
    expect(blockOf(view, 'approver_notice')).toContain(
      'Maria Lopez is away until 3 Dec; their delegate is Alex Kim.',
    );
    const before = hh.sim.approvals().length;
    await hh.slack.submitView(view.id, { note_input: 'Rack 4' });
    const approval = await waitFor(() => hh.sim.approvals()[before], 5000, 'the approval');
    expect(approval).toMatchObject({ requester: SAM, approver: ALEX });
    hh.workspace.views.delete(view.id);

    // Back on 3 Dec (Asia/Shanghai, the stand-in's zone): the delegation no longer applies.
    now = new Date('2026-12-02T16:00:00Z');
    const later = await hh.openModal(SAM);
    expect(text(later.view)).toContain(`"initial_user":"${hh.user(MARIA)}"`);
    expect(blockOf(later, 'approver_notice')).toBe('null');
  });

  it('says it in Chinese, and never suggests the requester as their own leader’s delegate', async () => {
    const hh = await harness({ now: () => NOW });
    await setDelegate(hh, MARIA, SAM, '2026-12-03');
    const li = await hh.openModal(LI);
    expect(text(li.view)).toContain(`"initial_user":"${hh.user(SAM)}"`);
    expect(blockOf(li, 'approver_notice')).toContain(
      'Maria Lopez 12月3日 前不在岗，委托 Sam Taylor 代为审批',
    );
    // Sam is Maria's delegate, and asks himself: his request goes to Maria, not to him.
    const sam = await hh.openModal(SAM);
    expect(text(sam.view)).toContain(`"initial_user":"${hh.user(MARIA)}"`);
  });

  it('keeps a delegate who is not on Slack by login in the form, saying whose delegate they are', async () => {
    const hh = await harness({ now: () => NOW, notOnSlack: [ALEX] });
    // Set while Alex was on Slack: what the app's Home wrote, as its store writes it.
    const database = await openDatabase(hh.env.DATABASE_URL);
    await createDelegationStore(database.db).set({
      from: MARIA,
      to: ALEX,
      until: new Date('2026-12-02T16:00:00Z'),
      setAt: NOW,
    });
    await database.close();
    const view = await hh.openModal(SAM);
    expect(text(view.view)).toContain(`"initial_value":"${ALEX}"`);
    expect(text(view.view)).toContain(
      `Maria Lopez is away until 3 Dec; their delegate is ${ALEX}.`,
    );
  });

  it('passes over a delegate the service no longer knows (they left after being named): the form and the workflow step ask the person themself', async () => {
    const hh = await harness({
      now: () => NOW,
      extraSlackUsers: [{ login: 'ghost@corp.example', name: 'Ghost Writer' }],
    });
    // Named while the service knew them: what Home's Save wrote, as its store writes it.
    const database = await openDatabase(hh.env.DATABASE_URL);
    await createDelegationStore(database.db).set({
      from: MARIA,
      to: 'ghost@corp.example',
      until: new Date('2026-12-02T16:00:00Z'),
      setAt: NOW,
    });
    await database.close();
    const view = await hh.openModal(SAM);
    expect(text(view.view)).toContain(`"initial_user":"${hh.user(MARIA)}"`);
    expect(text(view.view)).not.toContain('Ghost Writer');
    hh.workspace.views.delete(view.id);

    await hh.slack.functionExecuted('request_approval_step', {
      requester: hh.user(SAM),
      approver: hh.user(MARIA),
      title: 'Quarterly budget',
      note: 'Marketing, Q4.',
      channel: hh.channel('general'),
      interactivity: hh.workspace.interactivityOf(hh.user(SAM)),
    });
    const modal = await waitFor(
      () =>
        [...hh.workspace.views.values()].find(
          (v) => v.user === hh.user(SAM) && v.view.callback_id === 'step_confirm_modal',
        ),
      5000,
      'the confirmation modal',
    );
    expect(text(modal.view)).not.toContain('their delegate is');
    await hh.slack.submitView(modal.id);
    const approval = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    expect(approval).toMatchObject({ requester: SAM, approver: MARIA });
  });

  it('a template naming an approver who delegated goes to the delegate', async () => {
    const hh = await harness({ now: () => NOW });
    const id = await addTemplate(hh, SAM, { name: 'Purchase', approver: hh.user(MARIA) });
    await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    const view = await hh.openModal(LI);
    const picked = await pickTemplate(hh, LI, view, id, { title_input: 'Disks' });
    expect(text(picked.view)).toContain(`"initial_user":"${hh.user(ALEX)}"`);
    expect(blockOf(picked, 'approver_notice')).toContain('委托 Alex Kim 代为审批');
    const before = hh.sim.approvals().length;
    await hh.slack.submitView(view.id, { title_input: '[Purchase] Disks', note_input: 'Ten.' });
    const approval = await waitFor(() => hh.sim.approvals()[before], 5000, 'the approval');
    expect(approval).toMatchObject({ requester: LI, approver: ALEX });
  });

  it('Request again of a template’s request goes to the template approver’s delegate, saying why', async () => {
    const hh = await harness({ now: () => NOW });
    const id = await addTemplate(hh, SAM, { name: 'Purchase', approver: hh.user(MARIA) });
    const form = await hh.openModal(SAM);
    await pickTemplate(hh, SAM, form, id, { title_input: 'Disks' });
    await hh.slack.submitView(form.id, { title_input: '[Purchase] Disks', note_input: 'Ten.' });
    const first = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
    expect(first).toMatchObject({ approver: MARIA });
    const parent = await waitFor(
      () => hh.workspace.messages.find((m) => isRequestMessage(m, first.djbh)),
      5000,
      'the request message',
    );
    hh.sim.decide(first.djbh, 'refuse');
    await hh.app.poll();
    await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(
      hh.user(SAM),
      { action_id: 'request_again', value: first.djbh },
      { channelId: parent.channel, messageTs: parent.ts },
    );
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 5000, 'the form');
    const again = await waitFor(
      () =>
        [...hh.workspace.views.values()].find(
          (v) => v.user === hh.user(SAM) && text(v.view).includes('their delegate is'),
        ),
      5000,
      'the form filled in again',
    );
    expect(text(again.view)).toContain(`"initial_user":"${hh.user(ALEX)}"`);
    expect(blockOf(again, 'approver_notice')).toContain(
      'Maria Lopez is away until 3 Dec; their delegate is Alex Kim.',
    );
  });

  it('picking someone who delegated says so, and keeps the pick', async () => {
    const hh = await harness({ now: () => NOW });
    await setDelegate(hh, 'olivia.brown@corp.example', ALEX, '2026-12-03');
    const view = await hh.openModal(SAM);
    const updates = hh.workspace.callsOf('views.update').length;
    await hh.slack.selectUser(
      hh.user(SAM),
      view.id,
      'approver_select',
      hh.user('olivia.brown@corp.example'),
    );
    await waitFor(() => hh.workspace.callsOf('views.update').length > updates, 5000, 'update');
    const updated = hh.workspace.views.get(view.id);
    expect(blockOf(updated, 'approver_notice')).toContain(
      'Olivia Brown is away until 3 Dec; their delegate is Alex Kim.',
    );
    expect(text(updated?.view)).toContain(
      `"initial_user":"${hh.user('olivia.brown@corp.example')}"`,
    );
  });

  it('the workflow step naming an approver who delegated asks the delegate, and so does one naming none', async () => {
    const hh = await harness({ now: () => NOW });
    await setDelegate(hh, MARIA, ALEX, '2026-12-03');
    for (const approver of [hh.user(MARIA), null]) {
      const before = hh.sim.approvals().length;
      await hh.slack.functionExecuted('request_approval_step', {
        requester: hh.user(SAM),
        ...(approver ? { approver } : {}),
        title: 'Quarterly budget',
        note: 'Marketing, Q4.',
        channel: hh.channel('general'),
        interactivity: hh.workspace.interactivityOf(hh.user(SAM)),
      });
      const modal = await waitFor(
        () =>
          [...hh.workspace.views.values()].find(
            (v) => v.user === hh.user(SAM) && v.view.callback_id === 'step_confirm_modal',
          ),
        5000,
        'the confirmation modal',
      );
      expect(text(modal.view)).toContain(`<@${hh.user(ALEX)}>`);
      expect(text(modal.view)).toContain(
        `<@${hh.user(MARIA)}> is away until 3 Dec; their delegate is <@${hh.user(ALEX)}>.`,
      );
      await hh.slack.submitView(modal.id);
      const approval = await waitFor(() => hh.sim.approvals()[before], 5000, 'the approval');
      expect(approval).toMatchObject({ requester: SAM, approver: ALEX });
      hh.workspace.views.delete(modal.id);
    }
  });
});

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(`a delegate on ${database.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    beforeAll(async () => {
      created = await database.create();
    });
    afterAll(async () => {
      await created?.drop();
    });

    it('is set on Home, followed by the form through a chain, kept over a restart, and cleared', async () => {
      const hh = await harness({ now: () => NOW, databaseUrl: created.url });
      await setDelegate(hh, MARIA, ALEX, '2026-12-03');
      await setDelegate(hh, ALEX, LI, '2026-12-01');
      await hh.restart();
      const view = await hh.openModal(SAM);
      // Maria → Alex → Li Wei: the end of the chain; the words name whose delegate it is.
      expect(text(view.view)).toContain(`"initial_user":"${hh.user(LI)}"`);
      expect(blockOf(view, 'approver_notice')).toContain(
        'Maria Lopez is away until 3 Dec; their delegate is Li Wei.',
      );
      hh.workspace.views.delete(view.id);
      await openHome(hh, MARIA);
      await pressOnHome(hh, MARIA, 'delegate_clear');
      const after = await hh.openModal(SAM);
      expect(text(after.view)).toContain(`"initial_user":"${hh.user(MARIA)}"`);
    });
  });
}
