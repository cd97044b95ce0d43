import { describe, expect, it } from 'vitest';
import { SlackApiError } from '../../src/sandbox/workspace.ts';
import {
  dmsTo,
  type Harness,
  type HarnessOptions,
  harnessPerTest,
  isRequestMessage,
  kindOf,
  waitFor,
} from '../helpers/harness.ts';

// Escalation to the approver's leader after unanswered reminders, and the requester offered
// Request again when the approver cannot be reached: the app through its HTTP endpoint with
// signed requests, the simulator's department lookup over HTTP, the Slack stand-in as Web API.

const harness = harnessPerTest();
const HOUR = 3_600_000;
const ALEX = 'alex.kim@corp.example';
const LIU = 'liu.yang@corp.example'; // Alex's leader, the suggested approver
const PRIYA = 'priya.nair@corp.example'; // Liu Yang's leader (en-US)
const SAM = 'sam.taylor@corp.example';
const MARIA = 'maria.lopez@corp.example';
const CHEN = 'chen.hao@corp.example'; // Maria's leader (zh-CN)
const ZHOU = 'zhou.lan@corp.example'; // Chen Hao's leader, the top of the chain
const GAO = 'gao.yu@corp.example'; // a deactivated Slack account

/** Reminders every hour, escalation after two of them, unless the test says otherwise. */
const ESCALATING: HarnessOptions = {
  env: {
    REMINDER_AFTER_HOURS: '1',
    REMINDER_INTERVAL_HOURS: '1',
    REMINDER_MAX: '3',
    ESCALATE_AFTER_REMINDERS: '2',
  },
};

const text = (x: unknown) => JSON.stringify(x ?? {});

/** Every escalation DM, to whoever. */
const escalationDms = (hh: Harness) =>
  hh.workspace.messages.filter((m) => kindOf(m).startsWith('escalation:'));

const threadNotes = (hh: Harness, parent: { channel: string; ts: string }, words: string) =>
  hh.workspace.replies(parent.channel, parent.ts).filter((m) => m.text.includes(words));

/** The action ids and link targets of a message's buttons. */
function buttons(blocks: unknown): Array<{ action: string; url?: string }> {
  const found: Array<{ action: string; url?: string }> = [];
  for (const block of (blocks ?? []) as Array<{ type: string; elements?: unknown[] }>) {
    if (block.type !== 'actions') continue;
    for (const e of block.elements as Array<{ action_id: string; url?: string }>)
      found.push({ action: e.action_id, ...(e.url ? { url: e.url } : {}) });
  }
  return found;
}

/** Starts an approval as `login`, choosing `approver` in the form instead of the suggestion. */
async function startWith(hh: Harness, login: string, approver: string) {
  const view = await hh.openModal(login);
  await hh.slack.submitView(view.id, {
    note_input: 'For the Q3 expansion',
    approver_select: hh.user(approver),
  });
  const approval = await waitFor(() => hh.sim.approvals()[0], 5000, 'the approval');
  expect(approval.approver).toBe(approver);
  const parent = await waitFor(
    () => hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    5000,
    'the request message',
  );
  await hh.app.deliver();
  return { approval, parent };
}

describe('escalation', () => {
  it('tells the approver’s leader once, after two unanswered reminders, with the approver’s links, and the requester in the thread', async () => {
    const hh = await harness({ ...ESCALATING, env: { ...ESCALATING.env, REMINDER_MAX: '2' } });
    const { approval, parent } = await hh.startApproval(ALEX);
    expect(approval.approver).toBe(LIU);
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    expect(dmsTo(hh, LIU, 'reminder:2')).toHaveLength(1);
    // Two reminders went out, but the second has not had its hour yet.
    await hh.app.poll(new Date(t0 + 2.7 * HOUR));
    expect(escalationDms(hh)).toHaveLength(0);

    const pass = await hh.app.poll(new Date(t0 + 3.3 * HOUR));
    expect(pass.escalated).toBe(1);
    const [dm, ...more] = dmsTo(hh, PRIYA, 'escalation');
    expect(more).toHaveLength(0);
    expect(escalationDms(hh)).toHaveLength(1);
    // Who waited how long for whom, on what; in Priya's language (en-US).
    expect(dm?.text).toContain(
      `<@${hh.user(ALEX)}> has been waiting 3 hours for <@${hh.user(LIU)}> to decide`,
    );
    expect(dm?.text).toContain('has not answered 2 reminders');
    expect(text(dm?.blocks)).toContain('New storage node');
    expect(text(dm?.blocks)).toContain(approval.djbh);
    // The approver's links and nothing else: no decision and no Request again for the leader.
    const approverDm = dmsTo(hh, LIU, 'approver-dm')[0];
    const edited = hh.workspace.messages.find((m) => m.ts === approverDm?.ts);
    expect(buttons(dm?.blocks)).toEqual(buttons(edited?.blocks));
    expect(buttons(dm?.blocks).map((b) => b.action)).toEqual(['view_thread']);
    expect(buttons(dm?.blocks)[0]?.url).toContain(parent.ts.replace('.', ''));

    const notes = threadNotes(hh, parent, 'escalated');
    expect(notes).toHaveLength(1);
    // The leader is named, not mentioned: they were told in their DM, once.
    expect(notes[0]?.text).toContain(
      `<@${hh.user(LIU)}> did not answer 2 reminders, so this was escalated to Priya Nair, their leader`,
    );
    expect(notes[0]?.text).not.toContain(`<@${hh.user(PRIYA)}>`);

    // Never again, however many passes follow.
    await hh.app.poll(new Date(t0 + 5 * HOUR));
    await hh.app.poll(new Date(t0 + 30 * HOUR));
    expect(escalationDms(hh)).toHaveLength(1);
    expect(threadNotes(hh, parent, 'escalated')).toHaveLength(1);
  });

  it('gives a leader their escalations together: one DM listing each approval and whom it waits for', async () => {
    const hh = await harness({ ...ESCALATING, env: { ...ESCALATING.env, REMINDER_MAX: '2' } });
    const first = await hh.startApproval(ALEX, 'general', 'New storage node');
    const second = await hh.startApproval(ALEX, 'general', 'Two more GPUs');
    // Liu asks Priya herself: it waits for Priya to decide, so it is never in her escalations.
    const own = await hh.startApproval(LIU, 'general', 'Conference trip');
    expect([first, second].map((s) => s.approval.approver)).toEqual([LIU, LIU]);
    expect(own.approval.approver).toBe(PRIYA);
    await hh.app.deliver();
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    await hh.app.poll(new Date(t0 + 3.3 * HOUR));

    // Both of Liu's approvals were escalated to Priya: she gets one DM, not one each.
    const toPriya = dmsTo(hh, PRIYA, 'escalation');
    expect(toPriya).toHaveLength(1);
    const dm = toPriya[0];
    expect(dm?.text).toContain('2 approvals were escalated to you');
    const listed = text(dm?.blocks);
    for (const { approval } of [first, second]) expect(listed).toContain(approval.djbh);
    expect(listed).toContain('New storage node');
    expect(listed).toContain('Two more GPUs');
    // Each waits for its approver, named as such; none is said to wait for her.
    expect(
      listed.match(new RegExp(`waiting for <@${hh.user(LIU)}> for 3 hours`, 'g')),
    ).toHaveLength(2);
    expect(listed).toContain(`from <@${hh.user(ALEX)}>`);
    expect(listed).not.toContain('waiting for you');
    expect(listed).not.toContain(own.approval.djbh);
    expect(listed).not.toContain('Conference trip');

    // Each thread says it was escalated to her: the one DM told her of both.
    for (const { parent } of [first, second])
      expect(threadNotes(hh, parent, 'escalated to Priya Nair')).toHaveLength(1);
    // Never again, however many passes follow.
    await hh.app.poll(new Date(t0 + 5 * HOUR));
    expect(dmsTo(hh, PRIYA, 'escalation')).toHaveLength(1);
  });

  it('tells a leader their escalations once when Slack took the digest but answered 5xx', async () => {
    // Started hours ago on the app's clock, so that the escalation goes out now, on Slack's:
    // the search for a post whose answer was lost looks from its first attempt on.
    let offset = -3.4 * HOUR;
    const now = () => new Date(Date.now() + offset);
    const pollAt = (hoursAgo: number) => {
      offset = -hoursAgo * HOUR;
      return hh.app.poll(now());
    };
    // The wait for a late commit has its own tests: here it would only hold the retry longer.
    const env = { ...ESCALATING.env, REMINDER_MAX: '2', SLACK_COMMIT_HORIZON_MS: '0' };
    const hh = await harness({ ...ESCALATING, env, now });
    const first = await hh.startApproval(ALEX, 'general', 'New storage node');
    const second = await hh.startApproval(ALEX, 'general', 'Two more GPUs');
    await hh.app.deliver();
    await pollAt(2.3);
    await pollAt(1.2);
    // The pass that escalates both: the digest is posted, its answer lost.
    hh.faults.failAfterCommit('chat.postMessage', 503);
    await pollAt(0);
    // Delivered on: the retries found the digest, and both threads say so.
    await waitFor(
      async () => {
        await hh.app.deliver();
        return [first, second].every(
          ({ parent }) => threadNotes(hh, parent, 'escalated to Priya Nair').length > 0,
        );
      },
      12_000,
      'both escalation notes',
    );

    // The digest Slack took told her of both: the other escalation is not a second digest.
    const toPriya = dmsTo(hh, PRIYA, 'escalation');
    expect(toPriya.map((m) => m.text)).toHaveLength(1);
    expect(toPriya[0]?.text).toContain('2 approvals were escalated to you');
    for (const { parent } of [first, second])
      expect(threadNotes(hh, parent, 'escalated to Priya Nair')).toHaveLength(1);
  });

  it('tells a leader of each approval escalated to them after the day’s first escalation DM, however many at once', async () => {
    // Priya's day (Los Angeles): one escalation in the morning, then two in one later pass.
    let clock = new Date('2026-11-23T08:00:00-08:00');
    const at = (iso: string) => {
      clock = new Date(iso);
      return clock;
    };
    const env = { ...ESCALATING.env, REMINDER_MAX: '2' };
    const hh = await harness({ ...ESCALATING, env, now: () => clock });
    const early = await hh.startApproval(ALEX, 'general', 'New storage node');
    await hh.app.deliver();
    await hh.app.poll(at('2026-11-23T09:10:00-08:00'));
    at('2026-11-23T09:30:00-08:00');
    const second = await hh.startApproval(ALEX, 'general', 'Two more GPUs');
    const third = await hh.startApproval(ALEX, 'general', 'A third monitor');
    await hh.app.deliver();
    await hh.app.poll(at('2026-11-23T10:20:00-08:00'));
    await hh.app.poll(at('2026-11-23T10:40:00-08:00'));
    await hh.app.poll(at('2026-11-23T11:30:00-08:00'));
    expect(text(dmsTo(hh, PRIYA, 'escalation'))).toContain(early.approval.djbh);
    await hh.app.poll(at('2026-11-23T11:50:00-08:00'));
    await hh.app.poll(at('2026-11-23T13:00:00-08:00'));
    await hh.app.deliver();

    // Both were escalated in the one pass: each reaches her, neither is taken as told by the
    // other's DM.
    const told = text(dmsTo(hh, PRIYA, 'escalation'));
    for (const { approval } of [second, third]) expect(told).toContain(approval.djbh);
    for (const { parent } of [early, second, third])
      expect(threadNotes(hh, parent, 'escalated to Priya Nair')).toHaveLength(1);
  });

  it('reminds an approver once when Slack took the reminder digest but answered 5xx', async () => {
    // Started an hour and more ago on the app's clock, so that the reminders go out now, on
    // Slack's: the search for a post whose answer was lost looks from its first attempt on.
    let offset = -1.2 * HOUR;
    const now = () => new Date(Date.now() + offset);
    const env = { ...ESCALATING.env, SLACK_COMMIT_HORIZON_MS: '0' };
    const hh = await harness({ ...ESCALATING, env, now });
    const first = await hh.startApproval(ALEX, 'general', 'New storage node');
    const second = await hh.startApproval(ALEX, 'general', 'Two more GPUs');
    await hh.app.deliver();
    // The pass that reminds Liu of both: the digest is posted, its answer lost.
    hh.faults.failAfterCommit('chat.postMessage', 503);
    offset = 0;
    expect((await hh.app.poll(now())).reminded).toBe(2);
    await waitFor(
      async () => {
        await hh.app.deliver();
        return [first, second].every(
          ({ parent }) => threadNotes(hh, parent, 'Reminded Liu').length > 0,
        );
      },
      12_000,
      'both reminder notes',
    );

    // The digest Slack took told him of both: the other reminder is not a second digest.
    const toLiu = dmsTo(hh, LIU, 'reminder');
    expect(toLiu.map((m) => m.text)).toHaveLength(1);
    // In his language (zh-CN): "2 approvals are waiting for you".
    expect(toLiu[0]?.text).toContain('有 2 个审批等待你处理');
    for (const { parent } of [first, second])
      expect(threadNotes(hh, parent, 'Reminded Liu')).toHaveLength(1);
  });

  it('says in the thread why it counts 2 unanswered reminders after noting reminder 3', async () => {
    const hh = await harness(ESCALATING);
    const { parent } = await hh.startApproval(ALEX);
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    // The second reminder has had its hour, and the third is due: both go in this pass.
    await hh.app.poll(new Date(t0 + 3.3 * HOUR));
    await hh.app.deliver();
    const thread = () =>
      hh.workspace
        .replies(parent.channel, parent.ts)
        .filter((m) => /Reminded|escalated/.test(m.text))
        .map((m) => m.text);
    await waitFor(() => thread().some((l) => l.includes('escalated')), 5000, 'the note');
    // Before, "Reminded … (reminder 3)" was followed by "did not answer 2 reminders" alone.
    expect(thread().some((l) => l.includes('(reminder 3)'))).toBe(true);
    expect(thread().find((l) => l.includes('escalated'))).toContain(
      'did not answer 2 reminders (reminder 3 is too recent to count), so this was escalated to Priya Nair',
    );
  });

  it('lets the leader it was escalated to open a private channel’s request they were told of: status agrees with the DM', async () => {
    const hh = await harness(ESCALATING);
    // #project-x: Sam, Alex and the app; Alex's approver is Liu Yang, whose leader is Priya.
    hh.workspace.addChannel(
      'project-x',
      'private',
      new Set([hh.user(SAM), hh.user(ALEX), hh.workspace.botUserId]),
    );
    const { approval } = await hh.startApproval(ALEX, 'project-x', 'Termination of J. Doe');
    expect(approval.approver).toBe(LIU);
    const status = async () => {
      const priya = hh.user(PRIYA);
      const seen = hh.workspace.ephemeral(priya).length;
      await hh.slack.command(priya, hh.channel('general'), `status ${approval.djbh}`);
      return text(await waitFor(() => hh.workspace.ephemeral(priya)[seen], 5000, 'the answer'));
    };
    // Before escalation Priya is in none of it.
    expect(await status()).not.toContain('Termination of J. Doe');
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    const [dm] = dmsTo(hh, PRIYA, 'escalation');
    expect(text(dm?.blocks)).toContain('Termination of J. Doe');
    // She is asked to act on it, so she may open it: what the DM told her, status shows her,
    // and her list and Home name it among what waits for her.
    const answer = await status();
    expect(answer).toContain('Termination of J. Doe');
    expect(answer).toContain('Pending');
    const priya = hh.user(PRIYA);
    const seen = hh.workspace.ephemeral(priya).length;
    await hh.slack.command(priya, hh.channel('general'), 'list');
    const list = await waitFor(() => hh.workspace.ephemeral(priya)[seen], 5000, 'the list');
    expect(text(list)).toContain(approval.djbh);
    const published = hh.workspace.callsOf('views.publish').length;
    await hh.slack.event({ type: 'app_home_opened', user: priya, channel: 'D0HOME', tab: 'home' });
    await waitFor(() => hh.workspace.callsOf('views.publish').length > published, 5000, 'Home');
    expect(text(hh.workspace.homes.get(priya))).toContain(approval.djbh);
  });

  it('speaks Chinese to a zh-CN leader, and in the thread when APP_LANGUAGE is zh', async () => {
    const hh = await harness({ env: { ...ESCALATING.env, APP_LANGUAGE: 'zh' } });
    const { parent } = await hh.startApproval(SAM);
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    const [dm] = dmsTo(hh, CHEN, 'escalation');
    expect(dm?.text).toContain(`<@${hh.user(SAM)}> 已等待 <@${hh.user(MARIA)}> 审批此申请 3 小时`);
    expect(dm?.text).toContain('未回应 2 次提醒');
    expect(text(dm?.blocks)).toContain('查看申请');
    const [note] = threadNotes(hh, parent, '已上报其上级');
    expect(note?.text).toContain(`<@${hh.user(MARIA)}> 未回应 2 次提醒，已上报其上级 Chen Hao`);
    expect(note?.text).not.toContain(`<@${hh.user(CHEN)}>`);
  });

  it('passes over a leader who is the requester, for the next one up', async () => {
    const hh = await harness(ESCALATING);
    // Chen Hao asks Maria, whose leader is Chen Hao himself: it goes to Zhou Lan instead.
    const { parent } = await startWith(hh, CHEN, MARIA);
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    expect(dmsTo(hh, ZHOU, 'escalation')).toHaveLength(1);
    expect(dmsTo(hh, CHEN, 'escalation')).toHaveLength(0);
    expect(threadNotes(hh, parent, 'escalated to Zhou Lan, their leader')).toHaveLength(1);
  });

  it('tells nobody anything when there is nobody above the approver but the requester', async () => {
    const hh = await harness(ESCALATING);
    // Zhou Lan asks Chen Hao: Chen's only leader is Zhou Lan, the requester.
    const { parent } = await startWith(hh, ZHOU, CHEN);
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    const pass = await hh.app.poll(new Date(t0 + 3.3 * HOUR));
    expect(pass.escalated).toBe(1);
    expect(escalationDms(hh)).toHaveLength(0);
    expect(threadNotes(hh, parent, 'escalated')).toHaveLength(0);
    // Recorded as done: the chain is not looked up again at every check.
    const again = await hh.app.poll(new Date(t0 + 4.4 * HOUR));
    expect(again.escalated).toBe(0);
  });

  it('names the leader in the thread escaped, so that a name cannot mention or notify anyone', async () => {
    const hh = await harness(ESCALATING);
    hh.workspace.userByLogin(PRIYA).realName = 'Priya <!here> & <@U0BOSS>';
    const { parent } = await hh.startApproval(ALEX);
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    const [note] = threadNotes(hh, parent, 'escalated');
    expect(note?.text).toContain(
      'escalated to Priya &lt;!here&gt; &amp; &lt;@U0BOSS&gt;, their leader',
    );
    expect(note?.text).not.toContain('<!here>');
  });

  it('escalates on behalf of the approver the service gave it to, after their own reminders, to their own leader', async () => {
    const hh = await harness(ESCALATING);
    const { approval, parent } = await hh.startApproval(ALEX);
    expect(approval.approver).toBe(LIU);
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    expect(dmsTo(hh, LIU, 'reminder:2')).toHaveLength(1);
    // The service's administrators give it to Maria: Liu's unanswered reminders say nothing of her.
    hh.sim.reassign(approval.djbh, MARIA);
    expect((await hh.app.poll(new Date(t0 + 3.3 * HOUR))).escalated).toBe(0);
    expect(escalationDms(hh)).toHaveLength(0);
    // Maria's own reminders, counted from when she got it, go unanswered: her leader hears of it.
    for (const hours of [4.4, 5.5]) {
      const pass = await hh.app.poll(new Date(t0 + hours * HOUR));
      expect(pass.escalated).toBe(0);
    }
    expect(dmsTo(hh, MARIA, 'reminder:2@1')).toHaveLength(1);
    expect(dmsTo(hh, LIU, 'reminder:3')).toHaveLength(0);
    expect((await hh.app.poll(new Date(t0 + 6.6 * HOUR))).escalated).toBe(1);
    expect(dmsTo(hh, CHEN, 'escalation')).toHaveLength(1);
    expect(dmsTo(hh, PRIYA, 'escalation')).toHaveLength(0);
    expect(threadNotes(hh, parent, 'escalated')).toHaveLength(1);
  });

  it('gives a reminder delivered late its full interval to be answered before escalating', async () => {
    const hh = await harness({ ...ESCALATING, env: { ...ESCALATING.env, REMINDER_MAX: '2' } });
    await hh.startApproval(ALEX);
    const liu = hh.user(LIU);
    let down = false;
    hh.workspace.beforeCall = (method, args) => {
      if (down && method === 'chat.postMessage' && args.channel === liu)
        throw new SlackApiError('service_unavailable');
    };
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    down = true;
    // Reminder 2 is recorded, but Slack will not take it until five hours in.
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    expect((await hh.app.poll(new Date(t0 + 3.3 * HOUR))).escalated).toBe(0);
    down = false;
    await hh.app.deliver(new Date(t0 + 5 * HOUR));
    expect(dmsTo(hh, LIU, 'reminder:2')).toHaveLength(1);
    // Three minutes after Liu got it: not unanswered yet.
    expect((await hh.app.poll(new Date(t0 + 5.05 * HOUR))).escalated).toBe(0);
    expect(escalationDms(hh)).toHaveLength(0);
    // A full hour after it reached him.
    expect((await hh.app.poll(new Date(t0 + 6.1 * HOUR))).escalated).toBe(1);
    expect(dmsTo(hh, PRIYA, 'escalation')).toHaveLength(1);
  });

  it('tells the leader how many reminders reached the approver unanswered, not how many were recorded', async () => {
    const hh = await harness(ESCALATING);
    const { parent } = await hh.startApproval(ALEX);
    const liu = hh.user(LIU);
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    // Reminder 3 cannot reach Liu, and the department lookup fails the first time it is due.
    hh.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.channel === liu)
        throw new SlackApiError('service_unavailable');
    };
    hh.sim.setFaults('department', { outage: true });
    expect((await hh.app.poll(new Date(t0 + 3.3 * HOUR))).escalated).toBe(0);
    hh.sim.clearFaults();
    expect((await hh.app.poll(new Date(t0 + 4.4 * HOUR))).escalated).toBe(1);
    const [dm] = dmsTo(hh, PRIYA, 'escalation');
    expect(dm?.text).toContain('has not answered 2 reminders');
    // The thread's note queues behind reminder 3's note; once that reached Liu, it says 2 as well.
    hh.workspace.beforeCall = undefined;
    await hh.app.deliver(new Date(t0 + 8 * HOUR));
    expect(dmsTo(hh, LIU, 'reminder:3')).toHaveLength(1);
    expect(threadNotes(hh, parent, 'did not answer 2 reminders')).toHaveLength(1);
  });

  it('never escalates with ESCALATE_AFTER_REMINDERS unset (off by default) or 0', async () => {
    for (const value of [undefined, '0']) {
      const env: Record<string, string> = {
        REMINDER_AFTER_HOURS: '1',
        REMINDER_INTERVAL_HOURS: '1',
        ...(value ? { ESCALATE_AFTER_REMINDERS: value } : {}),
      };
      const hh = await harness({ env });
      await hh.startApproval(ALEX);
      const t0 = Date.now();
      for (const hours of [1.1, 2.2, 3.3, 4.4, 5.5]) await hh.app.poll(new Date(t0 + hours * HOUR));
      expect(dmsTo(hh, LIU, 'reminder:3')).toHaveLength(1);
      expect(escalationDms(hh)).toHaveLength(0);
      await hh.close();
    }
  });

  it('does not escalate an approval decided before its reminders went unanswered', async () => {
    const hh = await harness(ESCALATING);
    // Decided before the reminders ran out: nothing.
    const first = await hh.startApproval(ALEX);
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    hh.sim.decide(first.approval.djbh, 'agree');
    await hh.app.poll(new Date(t0 + 3.3 * HOUR));
    expect(escalationDms(hh)).toHaveLength(0);
  });

  it('drops the leader’s DM, and says nothing in the thread, when the approval is decided before the DM can go out', async () => {
    const hh = await harness(ESCALATING);
    const { approval, parent } = await hh.startApproval(ALEX);
    const priya = hh.user(PRIYA);
    let slackDown = false;
    hh.workspace.beforeCall = (method, args) => {
      if (slackDown && method === 'chat.postMessage' && args.channel === priya)
        throw new SlackApiError('service_unavailable');
    };
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    slackDown = true;
    expect((await hh.app.poll(new Date(t0 + 3.3 * HOUR))).escalated).toBe(1);
    expect(escalationDms(hh)).toHaveLength(0);
    hh.sim.decide(approval.djbh, 'agree');
    slackDown = false;
    // Past the retry's backoff: the DM is taken up again, finds the approval decided, and drops.
    const later = await hh.app.deliver(new Date(t0 + 4 * HOUR));
    expect(later.skipped).toBeGreaterThanOrEqual(1);
    expect(escalationDms(hh)).toHaveLength(0);
    expect(threadNotes(hh, parent, 'escalated')).toHaveLength(0);
  });
});

describe('an approver who cannot be reached', () => {
  it('tells the requester at once, offers Request again to them alone, and never escalates', async () => {
    const hh = await harness(ESCALATING);
    const liu = hh.user(LIU);
    hh.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.channel === liu)
        throw new SlackApiError('channel_not_found');
    };
    const { approval, parent } = await hh.startApproval(ALEX);
    await hh.app.deliver();
    const [told, ...more] = threadNotes(hh, parent, 'cannot reach the approver');
    expect(more).toHaveLength(0);
    expect(told?.text).toContain('You can *Request again* from someone else.');
    expect(buttons(told?.blocks)).toEqual([{ action: 'request_again' }]);
    expect(text(told?.blocks)).toContain(`"value":"${approval.djbh}"`);
    // The request message offers it too, as it does for a rejected request.
    const card = await waitFor(() => {
      const m = hh.workspace.messages.find((x) => x.ts === parent.ts);
      return m && buttons(m.blocks).some((b) => b.action === 'request_again') ? m : undefined;
    });
    expect(card).toBeDefined();

    // Someone else pressing it is told so, only them, and nothing opens.
    const sam = hh.user(SAM);
    const opens = hh.workspace.callsOf('views.open').length;
    await hh.slack.blockAction(
      sam,
      { action_id: 'request_again', value: approval.djbh },
      { channelId: parent.channel, messageTs: told?.ts ?? '' },
    );
    const answer = await waitFor(() => hh.workspace.messages.find((m) => m.ephemeralTo === sam));
    expect(answer.text).toContain(
      `Only <@${hh.user(ALEX)}>, who requested it, can request it again.`,
    );
    expect(hh.workspace.callsOf('views.open').length).toBe(opens);
    // The requester gets the form.
    await hh.slack.blockAction(
      hh.user(ALEX),
      { action_id: 'request_again', value: approval.djbh },
      { channelId: parent.channel, messageTs: told?.ts ?? '' },
    );
    await waitFor(() => hh.workspace.callsOf('views.open').length > opens, 3000, 'the form');

    // No reminders to them, so nothing to escalate.
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3, 4.4]) await hh.app.poll(new Date(t0 + hours * HOUR));
    expect(escalationDms(hh)).toHaveLength(0);
  });

  it('reminds an approver who was not on Slack once they link their login, and stops offering Request again', async () => {
    const hh = await harness({
      // She links herself with a session token: an opt-in (the default is admin).
      env: { ...ESCALATING.env, ACCOUNT_LINKING: 'self' },
      notOnSlack: [MARIA],
      extraSlackUsers: [
        { login: 'maria.home', name: 'Maria L', email: 'maria@home.example', locale: 'en-US' },
      ],
    });
    const view = await hh.openModal(SAM);
    await hh.slack.submitView(view.id, { note_input: 'n' });
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    expect(approval.approver).toBe(MARIA);
    const parent = await waitFor(() =>
      hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    );
    await hh.app.deliver();
    expect(threadNotes(hh, parent, `The approver ${MARIA} is not on Slack`)).toHaveLength(1);
    const offers = () =>
      buttons(hh.workspace.messages.find((m) => m.ts === parent.ts)?.blocks).some(
        (b) => b.action === 'request_again',
      );
    await waitFor(offers, 5000, 'Request again on the request message');

    // Maria links her login to the Slack account she has.
    const home = hh.workspace.userByLogin('maria@home.example').id;
    await hh.slack.command(home, hh.channel('general'), 'link');
    const form = await waitFor(() =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === home && v.view.callback_id === 'link_account',
      ),
    );
    const token = hh.sim.people.find((p) => p.login === MARIA)?.token ?? '';
    await hh.slack.submitView(form.id, { session_token_input: token });
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(form.id)?.view).includes('Linked as'),
    );
    await hh.app.deliver();
    expect(offers()).toBe(false);

    const t0 = Date.now();
    for (const hours of [1.1, 2.2]) await hh.app.poll(new Date(t0 + hours * HOUR));
    const reminders = hh.workspace.messages.filter(
      (m) => m.channel !== parent.channel && kindOf(m).startsWith('reminder:'),
    );
    expect(reminders.map(kindOf)).toEqual(['reminder:1', 'reminder:2']);
    expect(reminders.every((m) => hh.workspace.channels.get(m.channel)?.members.has(home))).toBe(
      true,
    );
    // The requester was told once, and is not told again.
    expect(threadNotes(hh, parent, 'is not on Slack')).toHaveLength(1);
  });

  it('treats an approver picked in the form whose Slack account is deactivated as unreachable: no DM, the requester told once', async () => {
    const hh = await harness(ESCALATING);
    const { approval, parent } = await startWith(hh, SAM, GAO);
    await hh.app.deliver();
    // Posting to an existing DM with a deactivated account may still go through in Slack.
    expect(dmsTo(hh, GAO, 'approver-dm')).toEqual([]);
    const told = threadNotes(hh, parent, 'cannot reach the approver');
    expect(told).toHaveLength(1);
    expect(told[0]?.text).toContain('deactivated');
    expect(buttons(told[0]?.blocks)).toEqual([{ action: 'request_again' }]);
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3, 4.4]) await hh.app.poll(new Date(t0 + hours * HOUR));
    expect(dmsTo(hh, GAO, 'reminder')).toEqual([]);
    expect(escalationDms(hh)).toHaveLength(0);
    expect(threadNotes(hh, parent, 'cannot reach the approver')).toHaveLength(1);
    expect(hh.sim.approvals().map((a) => a.djbh)).toEqual([approval.djbh]);
  });

  it('stops reminding an approver whose account is deactivated meanwhile, and tells the requester once', async () => {
    const hh = await harness(ESCALATING);
    const { parent } = await hh.startApproval(ALEX);
    expect(dmsTo(hh, LIU, 'approver-dm')).toHaveLength(1);
    const liu = hh.workspace.users.get(hh.user(LIU));
    if (!liu) throw new Error('no Liu');
    liu.deleted = true;
    // A restart forgets what the app knew of people (it keeps it for ten minutes).
    await hh.restart();
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    expect(dmsTo(hh, LIU, 'reminder')).toEqual([]);
    expect(threadNotes(hh, parent, 'cannot reach the approver')).toHaveLength(1);
    expect(escalationDms(hh)).toHaveLength(0);
  });

  it('passes over a leader whose account is deactivated, for the next one up', async () => {
    const hh = await harness({ ...ESCALATING, env: { ...ESCALATING.env, REMINDER_MAX: '2' } });
    await hh.startApproval(ALEX);
    const priya = hh.workspace.users.get(hh.user(PRIYA));
    if (!priya) throw new Error('no Priya');
    priya.deleted = true;
    await hh.restart();
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    expect(dmsTo(hh, PRIYA, 'escalation')).toEqual([]);
    expect(dmsTo(hh, ZHOU, 'escalation')).toHaveLength(1);
  });

  it('drops the leader’s DM when their account is deactivated after they were chosen', async () => {
    const hh = await harness({ ...ESCALATING, env: { ...ESCALATING.env, REMINDER_MAX: '2' } });
    const { parent } = await hh.startApproval(ALEX);
    const priyaId = hh.user(PRIYA);
    // Slack is briefly unavailable for the leader's DM, so it waits for its next attempt.
    hh.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.channel === priyaId)
        throw new SlackApiError('service_unavailable');
    };
    const t0 = Date.now();
    for (const hours of [1.1, 2.2, 3.3]) await hh.app.poll(new Date(t0 + hours * HOUR));
    expect(escalationDms(hh)).toHaveLength(0);
    hh.workspace.beforeCall = undefined;
    const priya = hh.workspace.users.get(priyaId);
    if (!priya) throw new Error('no Priya');
    priya.deleted = true;
    await hh.restart();
    await hh.app.deliver(new Date(t0 + 4 * HOUR));
    await hh.app.deliver(new Date(t0 + 5 * HOUR));
    expect(dmsTo(hh, PRIYA, 'escalation')).toEqual([]);
    // Nobody was told, so the thread does not say it was escalated.
    expect(threadNotes(hh, parent, 'escalated')).toHaveLength(0);
  });

  it('tells the requester once, with Request again, when the approver is not on Slack at all', async () => {
    const hh = await harness({ notOnSlack: [MARIA] });
    const view = await hh.openModal(SAM);
    await hh.slack.submitView(view.id, { note_input: 'n' });
    const approval = await waitFor(() => hh.sim.approvals()[0]);
    const parent = await waitFor(() =>
      hh.workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
    );
    await hh.app.deliver();
    const told = threadNotes(hh, parent, `The approver ${MARIA} is not on Slack`);
    expect(told).toHaveLength(1);
    expect(buttons(told[0]?.blocks)).toEqual([{ action: 'request_again' }]);
  });
});
