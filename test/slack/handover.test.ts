import { describe, expect, it } from 'vitest';
import {
  dmsTo,
  type Harness,
  type HarnessOptions,
  harnessPerTest,
  kindOf,
  waitFor,
} from '../helpers/harness.ts';

// The approval service gives an approval to someone else: from the next check on, the app's
// approver is the one the service names. Everything through the app's real boundaries: the
// simulator over HTTP, signed requests, the Slack stand-in.

const harness = harnessPerTest();
const HOUR = 3_600_000;
const SAM = 'sam.taylor@corp.example'; // requester; the form suggests Maria
const MARIA = 'maria.lopez@corp.example';
const ALEX = 'alex.kim@corp.example';

const REMINDING: HarnessOptions = {
  env: { REMINDER_AFTER_HOURS: '1', REMINDER_INTERVAL_HOURS: '1', REMINDER_MAX: '3' },
};

const handoverNotes = (hh: Harness, parent: { channel: string; ts: string }) =>
  hh.workspace
    .replies(parent.channel, parent.ts)
    .filter((m) => kindOf(m).startsWith('handed-over'));

/** Runs `/approve <text>` as `login` and returns what only they see. */
async function ask(hh: Harness, login: string, text: string): Promise<string> {
  const userId = hh.user(login);
  const seen = hh.workspace.ephemeral(userId).length;
  const response = await hh.slack.command(userId, hh.channel('random'), text);
  expect(response.status).toBe(200);
  const answer = await waitFor(() => hh.workspace.ephemeral(userId)[seen], 5000, 'the answer');
  return JSON.stringify({ text: answer.text, blocks: answer.blocks });
}

async function openHome(hh: Harness, login: string): Promise<string> {
  const userId = hh.user(login);
  const published = hh.workspace.callsOf('views.publish').length;
  await hh.slack.event({ type: 'app_home_opened', user: userId, channel: 'D0HOME', tab: 'home' });
  await waitFor(() => hh.workspace.callsOf('views.publish').length > published);
  return JSON.stringify(hh.workspace.homes.get(userId));
}

describe('an approval the service gives to someone else', () => {
  it('waits for the new approver in their list and Home, no longer in the old one’s, who may still open it', async () => {
    const hh = await harness();
    const { approval } = await hh.startApproval(SAM, 'general', 'Rack power');
    expect(approval.approver).toBe(MARIA);
    expect(await ask(hh, MARIA, 'list')).toContain('Rack power');
    expect(await ask(hh, ALEX, 'list')).not.toContain('Rack power');
    hh.sim.reassign(approval.djbh, ALEX);
    await hh.app.poll();
    await hh.app.deliver();
    expect(await ask(hh, ALEX, 'list')).toContain('Rack power');
    expect(await openHome(hh, ALEX)).toContain('Rack power');
    expect(await ask(hh, MARIA, 'list')).not.toContain('Rack power');
    expect(await openHome(hh, MARIA)).not.toContain('Rack power');
    // Maria read its title in her DM: she may still open it (WHO_MAY's former approver).
    expect(await ask(hh, MARIA, `status ${approval.djbh}`)).toContain('Rack power');
  });

  it('gives the new approver the approver’s DM, and says so once in the thread even when two replicas check', async () => {
    const hh = await harness();
    const replica = await hh.startReplica();
    const { approval, parent } = await hh.startApproval(SAM, 'general', 'Rack power');
    expect(dmsTo(hh, MARIA, 'approver-dm')).toHaveLength(1);
    hh.sim.reassign(approval.djbh, ALEX);
    await Promise.all([hh.app.poll(), replica.poll()]);
    await Promise.all([hh.app.poll(new Date(Date.now() + 60_000)), replica.poll()]);
    await Promise.all([hh.app.deliver(), replica.deliver()]);
    const dm = await waitFor(() => dmsTo(hh, ALEX, 'approver-dm@1')[0], 5000, 'Alex’s DM');
    expect(JSON.stringify(dm)).toContain('Rack power');
    expect(dmsTo(hh, ALEX, 'approver-dm@1')).toHaveLength(1);
    const notes = handoverNotes(hh, parent);
    expect(notes).toHaveLength(1);
    expect(notes[0]?.text).toContain('handed this from Maria');
    expect(notes[0]?.text).toContain('to Alex');
    // The request message names Alex as its approver now.
    await waitFor(() =>
      JSON.stringify(hh.workspace.messages.find((m) => m.ts === parent.ts)?.blocks).includes(
        hh.user(ALEX),
      ),
    );
  });

  it('reminds the new approver, counting from when they got it, and no longer the old one', async () => {
    const hh = await harness(REMINDING);
    const { approval } = await hh.startApproval(SAM, 'general', 'Rack power');
    const t0 = Date.now();
    await hh.app.poll(new Date(t0 + 1.1 * HOUR));
    await hh.app.deliver(new Date(t0 + 1.1 * HOUR));
    expect(dmsTo(hh, MARIA, 'reminder:1')).toHaveLength(1);
    hh.sim.reassign(approval.djbh, ALEX);
    await hh.app.poll(new Date(t0 + 2.2 * HOUR));
    await hh.app.deliver(new Date(t0 + 2.2 * HOUR));
    // Just handed over: his DM, no reminder yet; Maria gets none any more.
    expect(dmsTo(hh, ALEX, 'approver-dm@1')).toHaveLength(1);
    for (const hours of [3.3, 4.4]) {
      await hh.app.poll(new Date(t0 + hours * HOUR));
      await hh.app.deliver(new Date(t0 + hours * HOUR));
    }
    expect(dmsTo(hh, ALEX, 'reminder:1@1')).toHaveLength(1);
    expect(dmsTo(hh, ALEX, 'reminder:2@1')).toHaveLength(1);
    expect(dmsTo(hh, MARIA, 'reminder:2')).toHaveLength(0);
  });

  it('follows it back and forth: each handover recorded once, the list always the current approver’s', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval(SAM, 'general', 'Rack power');
    hh.sim.reassign(approval.djbh, ALEX);
    await hh.app.poll();
    hh.sim.reassign(approval.djbh, MARIA);
    await hh.app.poll(new Date(Date.now() + 60_000));
    await hh.app.deliver();
    expect(await ask(hh, MARIA, 'list')).toContain('Rack power');
    expect(await ask(hh, ALEX, 'list')).not.toContain('Rack power');
    // Maria's DM of her second term; the thread tells the latest handover (the first was still
    // waiting to go out when it was handed back, so it is not told twice over).
    await waitFor(() => dmsTo(hh, MARIA, 'approver-dm@2')[0], 5000, 'Maria’s DM again');
    const notes = handoverNotes(hh, parent);
    expect(notes.at(-1)?.text).toContain('handed this from Alex');
    // Decided by Maria now: credited to her, announced once.
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll(new Date(Date.now() + 120_000));
    await hh.app.deliver();
    const decisions = hh.workspace
      .replies(parent.channel, parent.ts)
      .filter((m) => m.text.includes('Approved'));
    expect(decisions).toHaveLength(1);
  });
});
