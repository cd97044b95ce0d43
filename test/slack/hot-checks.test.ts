import { describe, expect, it } from 'vitest';
import { dmsTo, type Harness, harnessPerTest, waitFor } from '../helpers/harness.ts';

const harness = harnessPerTest();
const MARIA = 'maria.lopez@corp.example';
const HOUR = 3_600_000;
const WEB = { APPROVAL_WEB_URL: 'https://approvals.corp.example/' };

/** An approval a day old, just checked: the regular schedule looks at it again in an hour. */
async function dayOldApproval(hh: Harness, clock: { offset: number }) {
  const started = await hh.startApproval();
  clock.offset = 26 * HOUR;
  await hh.app.poll();
  return started;
}

/** Maria presses Open in approval service on her DM from the app. */
async function mariaOpensTheService(hh: Harness) {
  const dm = dmsTo(hh, MARIA, 'approver-dm')[0];
  if (!dm) throw new Error('no DM to Maria');
  const response = await hh.slack.blockAction(
    hh.user(MARIA),
    { action_id: 'open_in_service' },
    { channelId: dm.channel, messageTs: dm.ts },
  );
  expect(response.status).toBe(200);
}

const decisionReplies = (hh: Harness, parent: { channel: string; ts: string }) =>
  hh.workspace.replies(parent.channel, parent.ts).filter((r) => r.text?.includes('Approved'));

describe('an approver who opens the service from Slack', () => {
  it('sees the decision in the thread at the next hot pass, also after a restart; without the click it waits for the schedule', async () => {
    const clock = { offset: 0 };
    const hh = await harness({ env: WEB, now: () => new Date(Date.now() + clock.offset) });
    const { approval, parent } = await dayOldApproval(hh, clock);
    hh.sim.decide(approval.djbh, 'agree');
    // Without a click: neither the hot pass nor the regular one (not due for an hour) looks.
    expect((await hh.app.hotPoll()).checked).toBe(0);
    expect((await hh.app.poll()).checked).toBe(0);
    expect(decisionReplies(hh, parent)).toEqual([]);
    await mariaOpensTheService(hh);
    // The mark is in the database: a restarted replica's hot pass finds it.
    await hh.restart();
    const counts = await hh.app.hotPoll();
    expect(counts.checked).toBe(1);
    expect(decisionReplies(hh, parent)).toHaveLength(1);
    // Decided: nothing more to check, hot or not.
    expect((await hh.app.hotPoll(new Date(Date.now() + clock.offset + 10_000))).checked).toBe(0);
  });

  it('marks only the clicker’s own approvals, and hot checks stop when the window ends', async () => {
    const clock = { offset: 0 };
    const hh = await harness({ env: WEB, now: () => new Date(Date.now() + clock.offset) });
    await dayOldApproval(hh, clock);
    // Sam (the requester) presses the same kind of link: nothing of his is waiting for him.
    const request = hh.workspace.messages.find(
      (m) => !m.threadTs && m.channel === hh.channel('general'),
    );
    await hh.slack.blockAction(
      hh.user('sam.taylor@corp.example'),
      { action_id: 'open_in_service' },
      { channelId: request?.channel ?? '', messageTs: request?.ts ?? '' },
    );
    expect((await hh.app.hotPoll()).checked).toBe(0);
    await mariaOpensTheService(hh);
    const at = (ms: number) => new Date(Date.now() + clock.offset + ms);
    expect((await hh.app.hotPoll(at(1))).checked).toBe(1);
    expect((await hh.app.hotPoll(at(6_000))).checked).toBe(1);
    // 16 minutes on, the mark has ended: no hot checks (the regular schedule goes on).
    expect((await hh.app.hotPoll(at(16 * 60_000))).checked).toBe(0);
  });

  it('is checked once per hot tick across two replicas, and posted once', async () => {
    const clock = { offset: 0 };
    const now = () => new Date(Date.now() + clock.offset);
    const hh = await harness({ env: WEB, now });
    const replica = await hh.startReplica({ now });
    const { approval, parent } = await dayOldApproval(hh, clock);
    await mariaOpensTheService(hh);
    const at = now();
    const [a, b] = await Promise.all([hh.app.hotPoll(at), replica.hotPoll(at)]);
    expect(a.checked + b.checked).toBe(1);
    hh.sim.decide(approval.djbh, 'agree');
    const later = new Date(at.getTime() + 6000);
    const [c, d] = await Promise.all([hh.app.hotPoll(later), replica.hotPoll(later)]);
    expect(c.checked + d.checked).toBe(1);
    await hh.app.deliver();
    await replica.deliver();
    expect(decisionReplies(hh, parent)).toHaveLength(1);
  });

  it('on the production hot schedule, shows the decision within 30 s of being made', async () => {
    const clock = { offset: 0 };
    const hh = await harness({
      env: { ...WEB, HOT_POLL_CRON: '*/5 * * * * *' },
      now: () => new Date(Date.now() + clock.offset),
    });
    const { approval, parent } = await dayOldApproval(hh, clock);
    await mariaOpensTheService(hh);
    // She decides a moment later, as people do once the service's page is open.
    await new Promise((r) => setTimeout(r, 1000));
    const decided = Date.now();
    hh.sim.decide(approval.djbh, 'agree');
    await waitFor(
      () => decisionReplies(hh, parent).length === 1,
      30_000,
      'the decision in the thread',
    );
    const seconds = (Date.now() - decided) / 1000;
    expect(seconds).toBeLessThan(30);
  });
});
