import { describe, expect, it } from 'vitest';
import type { View } from '../../src/sandbox/workspace.ts';
import { type Harness, harnessPerTest, waitFor } from '../helpers/harness.ts';

// Away-aware suggestions, through the app's HTTP endpoint with signed requests; Slack profiles
// (status, deactivation) come from the workspace stand-in's users.info, as Slack sends them.

const harness = harnessPerTest();
const NOW = new Date('2026-11-23T10:00:00Z');
// 10:00 on 3 Dec in Asia/Shanghai, the stand-in's time zone for everyone.
const BACK = Date.parse('2026-12-03T02:00:00Z');
const vacation = { text: 'Vacation', emoji: ':palm_tree:', expiresAt: BACK };

const viewText = (view: View | undefined) => JSON.stringify(view?.view ?? {});
const blockOf = (view: View | undefined, blockId: string) =>
  JSON.stringify(
    ((view?.view.blocks as Array<{ block_id?: string }> | undefined) ?? []).find(
      (b) => b.block_id === blockId,
    ) ?? null,
  );

/** Picks `login` as the approver in the open form and waits until the form has been updated. */
async function pick(hh: Harness, requester: string, view: View, login: string, typed = {}) {
  const updates = hh.workspace.callsOf('views.update').length;
  const response = await hh.slack.selectUser(
    hh.user(requester),
    view.id,
    'approver_select',
    hh.user(login),
    typed,
  );
  expect(response.status).toBe(200);
  await waitFor(
    () => hh.workspace.callsOf('views.update').length > updates,
    5000,
    'the form updated after the pick',
  );
  return hh.workspace.views.get(view.id);
}

describe('away-aware suggestions', () => {
  it('says the nearest leader is away until their status clears and suggests the next leader up', async () => {
    const hh = await harness({ now: () => NOW });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), vacation);
    const view = await hh.openModal('tom.baker@corp.example');
    expect(viewText(view)).toContain(`"initial_user":"${hh.user('chen.hao@corp.example')}"`);
    const notice = blockOf(view, 'approver_notice');
    expect(notice).toContain('Olivia Brown is away until 3 Dec: :palm_tree: Vacation');
    expect(notice).toContain('Suggested instead: Chen Hao, the next leader up.');
    // The notice sits right under the approver field.
    const ids = (view.view.blocks as Array<{ block_id?: string }>).map((b) => b.block_id);
    expect(ids.indexOf('approver_notice')).toBe(ids.indexOf('approver') + 1);
  });

  it('says it in Chinese to a person whose Slack is in Chinese', async () => {
    const hh = await harness({ now: () => NOW });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), {
      text: '年假',
      emoji: '',
      expiresAt: BACK,
    });
    const view = await hh.openModal('han.xue@corp.example');
    const notice = blockOf(view, 'approver_notice');
    expect(notice).toContain('Olivia Brown 不在岗，12月3日 前回来：年假');
    expect(notice).toContain('改为建议上一级领导 Chen Hao 审批');
    expect(viewText(view)).toContain(`"initial_user":"${hh.user('chen.hao@corp.example')}"`);
  });

  it('counts only a status with a future expiry whose emoji or words say away', async () => {
    const hh = await harness({ now: () => NOW });
    const maria = hh.user('maria.lopez@corp.example');
    for (const status of [
      { text: 'Vacation', emoji: ':palm_tree:', expiresAt: null }, // no expiry: decoration
      { text: 'Vacation', emoji: ':palm_tree:', expiresAt: NOW.getTime() - 60_000 }, // over
      { text: 'In a meeting', emoji: ':spiral_calendar_pad:', expiresAt: BACK },
      { text: '出差', emoji: ':airplane:', expiresAt: BACK }, // a business trip is not away
    ]) {
      hh.workspace.setStatus(maria, status);
      await hh.restart(); // a fresh cache of profiles
      const view = await hh.openModal('sam.taylor@corp.example');
      expect(viewText(view)).toContain(`"initial_user":"${maria}"`);
      expect(blockOf(view, 'approver_notice')).toBe('null');
      hh.workspace.views.delete(view.id);
    }
  });

  it('keeps the nearest leader, and says so, when everyone up the chain is away', async () => {
    const hh = await harness({ now: () => NOW });
    for (const login of [
      'olivia.brown@corp.example',
      'chen.hao@corp.example',
      'zhou.lan@corp.example',
    ])
      hh.workspace.setStatus(hh.user(login), { text: 'Out sick', emoji: '', expiresAt: BACK });
    const view = await hh.openModal('tom.baker@corp.example');
    expect(viewText(view)).toContain(`"initial_user":"${hh.user('olivia.brown@corp.example')}"`);
    const notice = blockOf(view, 'approver_notice');
    expect(notice).toContain('Olivia Brown is away until 3 Dec');
    expect(notice).toContain('Nobody further up the chain is available');
  });
});

describe('picking an approver', () => {
  it('says beside the field that the picked person is away and who is next up, keeping what was typed', async () => {
    const hh = await harness({ now: () => NOW });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), vacation);
    const view = await hh.openModal('sam.taylor@corp.example');
    expect(blockOf(view, 'approver_notice')).toBe('null');
    const updated = await pick(hh, 'sam.taylor@corp.example', view, 'olivia.brown@corp.example', {
      title_input: 'Firewall change',
      note_input: 'Open 443 to the new nodes',
    });
    const text = viewText(updated);
    expect(blockOf(updated, 'approver_notice')).toContain(
      'Olivia Brown is away until 3 Dec: :palm_tree: Vacation',
    );
    expect(blockOf(updated, 'approver_notice')).toContain('The next leader up is Chen Hao.');
    expect(text).toContain('"initial_value":"Firewall change"');
    expect(text).toContain('"initial_value":"Open 443 to the new nodes"');
    expect(text).toContain(`"initial_user":"${hh.user('olivia.brown@corp.example')}"`);
  });

  it('never blocks: the person may still send it to the one who is away', async () => {
    const hh = await harness({ now: () => NOW });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), vacation);
    const view = await hh.openModal('sam.taylor@corp.example');
    await pick(hh, 'sam.taylor@corp.example', view, 'olivia.brown@corp.example');
    const { errors } = await hh.slack.submitView(view.id, {
      note_input: 'n',
      approver_select: hh.user('olivia.brown@corp.example'),
    });
    expect(errors).toBeUndefined();
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    expect(approval.approver).toBe('olivia.brown@corp.example');
  });

  it('clears the notice when the person then picks someone who is there', async () => {
    const hh = await harness({ now: () => NOW });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), vacation);
    const view = await hh.openModal('sam.taylor@corp.example');
    const away = await pick(hh, 'sam.taylor@corp.example', view, 'olivia.brown@corp.example');
    expect(blockOf(away, 'approver_notice')).toContain('away');
    const back = await pick(hh, 'sam.taylor@corp.example', view, 'li.wei@corp.example');
    expect(blockOf(back, 'approver_notice')).toBe('null');
    expect(viewText(back)).toContain(`"initial_user":"${hh.user('li.wei@corp.example')}"`);
  });

  it('says a deactivated account is deactivated, and names the next leader up', async () => {
    const hh = await harness({ now: () => NOW });
    const view = await hh.openModal('sam.taylor@corp.example');
    const updated = await pick(hh, 'sam.taylor@corp.example', view, 'gao.yu@corp.example');
    const notice = blockOf(updated, 'approver_notice');
    expect(notice).toContain('Gao Yu’s Slack account is deactivated.');
    expect(notice).toContain('The next leader up is Priya Nair.');
  });

  it('lets the lookup fill the form in when the person picks before it lands', async () => {
    const hh = await harness({ now: () => NOW, env: { APPROVAL_TIMEOUT_MS: '5000' } });
    hh.workspace.setStatus(hh.user('olivia.brown@corp.example'), vacation);
    hh.sim.setFaults('department', { latencyMs: 1000 });
    const sam = hh.user('sam.taylor@corp.example');
    await hh.slack.command(sam, hh.channel('general'), 'Early pick');
    const view = await waitFor(() => [...hh.workspace.views.values()].find((v) => v.user === sam));
    expect(viewText(view)).toContain('Looking you up');
    const picked = await hh.slack.selectUser(
      sam,
      view.id,
      'approver_select',
      hh.user('li.wei@corp.example'),
    );
    expect(picked.status).toBe(200);
    const filled = await waitFor(
      () => viewText(hh.workspace.views.get(view.id)).includes('Suggested approver: Maria Lopez'),
      6000,
      'the form filled in by the lookup',
    );
    expect(filled).toBe(true);
    expect(viewText(hh.workspace.views.get(view.id))).not.toContain('Looking you up');
  });
});
