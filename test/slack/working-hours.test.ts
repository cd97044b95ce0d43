import { describe, expect, it } from 'vitest';
import { type Harness, harnessPerTest } from '../helpers/harness.ts';

// Reminders and escalation inside the approver's working hours, in their own time zone (Slack's
// `tz`): the app through its HTTP endpoint with signed requests, its clock set to chosen moments,
// the simulator over HTTP and the Slack stand-in, whose people are in Asia/Shanghai except Priya
// Nair (America/Los_Angeles).

const harness = harnessPerTest();
const ALEX = 'alex.kim@corp.example';
const LIU = 'liu.yang@corp.example'; // Alex's leader and approver, in Shanghai (UTC+8)
const PRIYA = 'priya.nair@corp.example'; // Liu's leader, in Los Angeles

const text = (x: unknown) => JSON.stringify(x ?? {});
const kindOf = (m: { metadata?: { event_payload: Record<string, unknown> } }) =>
  String(m.metadata?.event_payload.announcement_id ?? '').replace(/^[^:]*:/, '');

function dmsTo(h: Harness, login: string, kind: string) {
  const id = h.user(login);
  return h.workspace.messages.filter(
    (m) =>
      h.workspace.channels.get(m.channel)?.kind === 'im' &&
      h.workspace.channels.get(m.channel)?.members.has(id) &&
      kindOf(m).startsWith(`${kind}:`),
  );
}

/** A harness with working hours on (the defaults: 09:00–18:00, Monday to Friday) and a clock. */
async function workingHarness(start: string, env: Record<string, string> = {}) {
  let clock = new Date(start);
  const h = await harness({
    env: {
      WORKING_HOURS: '09:00-18:00',
      WORKING_DAYS: 'mon-fri',
      REMINDER_AFTER_HOURS: '1',
      REMINDER_INTERVAL_HOURS: '24',
      REMINDER_MAX: '2',
      ESCALATE_AFTER_REMINDERS: '2',
      ...env,
    },
    now: () => clock,
  });
  /** Moves the clock and runs a poll pass (and its deliveries) at it. */
  const pollAt = async (iso: string) => {
    clock = new Date(iso);
    return h.app.poll(clock);
  };
  return { h, pollAt };
}

describe('working hours', () => {
  it('reminds on Monday morning, not over the weekend, counts working days, and names the approver in the thread without mentioning them', async () => {
    // Friday 17:30 in Shanghai.
    const { h, pollAt } = await workingHarness('2026-11-20T17:30:00+08:00');
    const { approval, parent } = await h.startApproval(ALEX);
    expect(approval.approver).toBe(LIU);
    await h.app.deliver();

    // Due by the clock an hour later, but it is Friday evening, then the weekend, in Shanghai.
    for (const at of [
      '2026-11-20T18:30:00+08:00',
      '2026-11-21T11:00:00+08:00',
      '2026-11-22T15:00:00+08:00',
      '2026-11-23T08:55:00+08:00',
    ]) {
      const pass = await pollAt(at);
      expect(pass.reminded, at).toBe(0);
    }
    expect(dmsTo(h, LIU, 'reminder')).toHaveLength(0);

    // Monday 09:05: the held reminder goes at the first check of Liu's working day. Alex has
    // waited 35 minutes of Liu's working time (30 on Friday, 5 on Monday).
    expect((await pollAt('2026-11-23T09:05:00+08:00')).reminded).toBe(1);
    const [first] = dmsTo(h, LIU, 'reminder');
    expect(first?.text).toContain('35 分钟');

    // The thread says Liu was reminded, by name: no mention, so nobody is notified twice.
    const notes = h.workspace
      .replies(parent.channel, parent.ts)
      .filter((m) => kindOf(m).startsWith('reminder-note:'));
    expect(notes).toHaveLength(1);
    expect(notes[0]?.text).toContain('Reminded Liu Yang (reminder 1)');
    expect(notes[0]?.text).not.toContain('<@');

    // Tuesday: the second; Wednesday: escalation to Priya, saying working days, not the clock's
    // (Friday 30 min + Monday 9 h + Tuesday 9 h + Wednesday 15 min: two working days, not five).
    expect((await pollAt('2026-11-24T09:10:00+08:00')).reminded).toBe(1);
    expect(dmsTo(h, LIU, 'reminder')[1]?.text).toContain('1 天');
    expect((await pollAt('2026-11-25T09:15:00+08:00')).escalated).toBe(1);
    const [escalation] = dmsTo(h, PRIYA, 'escalation');
    expect(escalation?.text).toContain(
      `<@${h.user(ALEX)}> has been waiting 2 days for <@${h.user(LIU)}> to decide`,
    );
  });

  it('escalates only inside the approver’s working hours', async () => {
    const { h, pollAt } = await workingHarness('2026-11-23T10:00:00+08:00', {
      REMINDER_INTERVAL_HOURS: '1',
    });
    await h.startApproval(ALEX);
    await h.app.deliver();
    expect((await pollAt('2026-11-23T11:05:00+08:00')).reminded).toBe(1);
    expect((await pollAt('2026-11-23T12:10:00+08:00')).reminded).toBe(1);
    // Due by the clock from 13:10, but Liu's day ends at 18:00 and the escalation waits.
    expect((await pollAt('2026-11-23T18:30:00+08:00')).escalated).toBe(0);
    expect((await pollAt('2026-11-24T07:00:00+08:00')).escalated).toBe(0);
    expect(dmsTo(h, PRIYA, 'escalation')).toHaveLength(0);
    expect((await pollAt('2026-11-24T09:01:00+08:00')).escalated).toBe(1);
    expect(dmsTo(h, PRIYA, 'escalation')).toHaveLength(1);
  });

  it('holds a reminder to an approver in another time zone until their own morning', async () => {
    // Monday 10:00 in Shanghai is Sunday 18:00 in Los Angeles, where Priya, Liu's approver, is.
    const { h, pollAt } = await workingHarness('2026-11-23T10:00:00+08:00');
    const { approval } = await h.startApproval(LIU);
    expect(approval.approver).toBe(PRIYA);
    await h.app.deliver();
    // What Slack's users.info says of her, as the app reads it.
    const info = await fetch(`${h.env.SLACK_API_URL}users.info`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.env.SLACK_BOT_TOKEN}` },
      body: new URLSearchParams({ user: h.user(PRIYA) }),
    }).then((r) => r.json());
    expect(info).toMatchObject({ user: { tz: 'America/Los_Angeles', tz_offset: -8 * 3600 } });

    // Working hours in Shanghai all day, but Sunday night and then Monday night in Los Angeles.
    for (const at of ['2026-11-23T11:30:00+08:00', '2026-11-23T17:00:00+08:00']) {
      expect((await pollAt(at)).reminded, at).toBe(0);
    }
    // Monday 09:10 in Los Angeles.
    expect((await pollAt('2026-11-23T09:10:00-08:00')).reminded).toBe(1);
    const [dm] = dmsTo(h, PRIYA, 'reminder');
    // She has waited 10 minutes of her working time (the request came on her Sunday).
    expect(dm?.text).toContain('has been waiting 10 minutes');
    expect(text(dm?.blocks)).toContain(approval.djbh);
  });

  it('gives an approver with several approvals waiting one digest at the start of their day', async () => {
    // Sam asks Maria three times late on Friday afternoon in Shanghai; none is due before 18:00.
    const { h, pollAt } = await workingHarness('2026-11-20T16:50:00+08:00');
    const SAM = 'sam.taylor@corp.example';
    const MARIA = 'maria.lopez@corp.example';
    const started: string[] = [];
    for (const [at, title] of [
      ['2026-11-20T16:50:00+08:00', 'New storage node'],
      ['2026-11-20T17:10:00+08:00', 'Two more GPUs'],
      ['2026-11-20T17:30:00+08:00', 'Conference trip'],
    ] as const) {
      await pollAt(at);
      const { approval } = await h.startApproval(SAM, 'general', title);
      started.push(approval.djbh);
    }
    await h.app.deliver();
    expect((await pollAt('2026-11-20T17:45:00+08:00')).reminded).toBe(0);
    // Monday 09:05: all three are due; Maria gets one digest of them, not three reminders.
    expect((await pollAt('2026-11-23T09:05:00+08:00')).reminded).toBe(3);
    const monday = dmsTo(h, MARIA, 'reminder');
    expect(monday).toHaveLength(1);
    const digest = monday[0];
    expect(digest?.text).toContain('Reminder: 3 approvals are waiting for you');
    const body = text(digest?.blocks);
    for (const djbh of started) expect(body).toContain(djbh);
    // Who asked, how long in Maria's working hours (Friday's until 18:00 and Monday's 5 minutes,
    // not the weekend), and the link to each thread.
    expect(body).toContain(`<@${h.user(SAM)}>`);
    expect(body).toContain('waiting 1 hour'); // 16:50
    expect(body).toContain('waiting 55 minutes'); // 17:10
    expect(body).toContain('waiting 35 minutes'); // 17:30
    expect(body).toMatch(/\*<http[^|>]+\|Conference trip>\*/);

    // A request made later that day falls due on its own: one reminder, no second digest.
    await pollAt('2026-11-23T10:00:00+08:00');
    const { approval: later } = await h.startApproval(SAM, 'general', 'Late request');
    await h.app.deliver();
    await pollAt('2026-11-23T11:05:00+08:00');
    const afterwards = dmsTo(h, MARIA, 'reminder').slice(1);
    expect(afterwards).toHaveLength(1);
    expect(afterwards[0]?.text).toContain('has been waiting 1 hour for your approval');
    expect(text(afterwards[0]?.blocks)).toContain(later.djbh);

    // Tuesday: the three's second reminders, one digest again; Wednesday: reminders delivered
    // inside a digest count as delivered, so all three are escalated to Chen Hao, Maria's leader.
    expect((await pollAt('2026-11-24T09:10:00+08:00')).reminded).toBe(3);
    expect(dmsTo(h, MARIA, 'reminder')).toHaveLength(3);
    expect((await pollAt('2026-11-25T09:15:00+08:00')).escalated).toBe(3);
    // Chen Hao gets them together (issue 37): one DM listing the three, in his language (zh-CN),
    // each waiting for Maria in her working days, never for him.
    const toChen = dmsTo(h, 'chen.hao@corp.example', 'escalation');
    expect(toChen).toHaveLength(1);
    expect(toChen[0]?.text).toContain('有 3 个审批已上报给你');
    const listed = text(toChen[0]?.blocks);
    for (const djbh of started) expect(listed).toContain(djbh);
    expect(listed.match(new RegExp(`等待 <@${h.user(MARIA)}> 审批已 2 天`, 'g'))).toHaveLength(3);
    expect(listed).not.toContain('Late request');
  });

  it('reminds on the clock, any day, with WORKING_HOURS=off', async () => {
    const { h, pollAt } = await workingHarness('2026-11-21T10:00:00+08:00', {
      WORKING_HOURS: 'off',
    });
    await h.startApproval(ALEX);
    await h.app.deliver();
    // Saturday, 11:05 in Shanghai.
    expect((await pollAt('2026-11-21T11:05:00+08:00')).reminded).toBe(1);
  });
});
