import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/sandbox/workspace.ts';
import { type Harness, harnessPerTest, isRequestMessage, waitFor } from '../helpers/harness.ts';
import { addTemplate, pickTemplate } from '../helpers/template-forms.ts';

// Requests in several steps, through the app's HTTP endpoint with signed requests, the simulator
// over HTTP and the Slack stand-in: a template names the steps after the form's approver; each
// step is its own approval in the service, all told in the first step's thread.

const harness = harnessPerTest();
const SAM = 'sam.taylor@corp.example'; // nearest leader Maria, then Chen Hao, then Zhou Lan
const MARIA = 'maria.lopez@corp.example';
const CHEN = 'chen.hao@corp.example';
const ZHOU = 'zhou.lan@corp.example';

const text = (x: unknown) => JSON.stringify(x ?? {});

/** Sam asks through a template with `steps` after the form's approver (Maria, suggested). */
async function askWithSteps(hh: Harness, steps: string) {
  const id = await addTemplate(hh, SAM, { name: 'Purchase', prefix: '[Purchase]', steps });
  const form = await hh.openModal(SAM, 'general', 'Rack switches');
  const filled = await pickTemplate(hh, SAM, form, id, { note_input: 'Two 48-port switches' });
  const { errors } = await hh.slack.submitView(filled.id, { note_input: 'Two 48-port switches' });
  expect(errors).toBeUndefined();
  const first = await waitFor(() => hh.sim.approvals()[0], 5000, 'step 1 in the service');
  const parent = await waitFor(
    () => hh.workspace.messages.find((m) => isRequestMessage(m, first.djbh)),
    5000,
    'the request message',
  );
  return { first, parent };
}

const replies = (hh: Harness, parent: Message) => hh.workspace.replies(parent.channel, parent.ts);
const repliesSay = (hh: Harness, parent: Message, words: string) =>
  replies(hh, parent).some((r) => text(r).includes(words));

describe('a request in several steps', () => {
  it('starts step 2 in the service once step 1 is approved, in the same thread, and ends approved', async () => {
    const hh = await harness();
    const { first, parent } = await askWithSteps(hh, 'second-level leader');
    expect(first).toMatchObject({ approver: MARIA, title: '[Purchase] Rack switches' });
    await hh.app.poll();
    expect(hh.sim.approvals()).toHaveLength(1);

    hh.sim.decide(first.djbh, 'agree');
    await hh.app.poll();
    const second = await waitFor(() => hh.sim.approvals()[1], 5000, 'step 2 in the service');
    expect(second).toMatchObject({ approver: CHEN, title: '[Purchase] Rack switches' });
    expect(second.djbh).not.toBe(first.djbh);
    // The same note, under a line naming the earlier step's decision and number.
    expect(second.note).toContain(`Earlier steps: 1. approved by ${MARIA} (${first.djbh})`);
    expect(second.note).toContain('Two 48-port switches');
    // Its request is a reply in the first step's thread, and Chen gets their DM.
    await hh.app.deliver();
    await waitFor(
      () => replies(hh, parent).some((r) => text(r.metadata).includes(`${second.djbh}:request`)),
      5000,
      'step 2 in the thread',
    );
    expect(hh.workspace.messages.filter((m) => isRequestMessage(m, second.djbh))).toEqual([]);
    // The first request message shows where the chain stands.
    const shows = (words: string) =>
      waitFor(
        () => text(hh.workspace.messages.find((m) => m.ts === parent.ts)?.blocks).includes(words),
        5000,
        words,
      );
    await shows('Step 2 of 2: Chen Hao — waiting');
    // `/approve status` of step 2 says which step it is, to the requester and to its approver.
    // Chen Hao reads Chinese.
    for (const [login, words] of [
      [SAM, 'Step 2 of 2'],
      [CHEN, '第 2 步（共 2 步）'],
    ] as const) {
      const userId = hh.user(login);
      const seen = hh.workspace.ephemeral(userId).length;
      await hh.slack.command(userId, hh.channel('general'), `status ${second.djbh}`);
      const answer = await waitFor(() => hh.workspace.ephemeral(userId)[seen], 5000, 'status');
      expect(text(answer)).toContain(words);
    }

    hh.sim.decide(second.djbh, 'agree');
    await hh.app.poll();
    await hh.app.poll();
    expect(hh.sim.approvals()).toHaveLength(2);
    await hh.app.deliver();
    await shows('Step 2 of 2: Chen Hao — approved');
    // One thread: step 2's request, then each step's decision, all replies to step 1's message.
    const decisions = replies(hh, parent).filter((r) => text(r.metadata).includes(':decision:'));
    expect(decisions.map((r) => text(r.metadata).includes(second.djbh))).toEqual([false, true]);
    expect(decisions.every((r) => text(r).includes('Approved'))).toBe(true);
  });

  it('ends at a rejection: no later step starts', async () => {
    const hh = await harness();
    const { first, parent } = await askWithSteps(hh, `second-level leader\n${ZHOU}`);
    hh.sim.decide(first.djbh, 'agree');
    await hh.app.poll();
    const second = await waitFor(() => hh.sim.approvals()[1], 5000, 'step 2');
    hh.sim.decide(second.djbh, 'refuse');
    await hh.app.poll();
    await hh.app.poll(new Date(Date.now() + 3_600_000));
    expect(hh.sim.approvals()).toHaveLength(2);
    expect(hh.sim.approvals().some((a) => a.approver === ZHOU)).toBe(false);
    await waitFor(() => repliesSay(hh, parent, 'Rejected'), 5000, 'the rejection');
  });

  it('skips a step whose approver approved an earlier one, and says so in the thread', async () => {
    const hh = await harness();
    const { first, parent } = await askWithSteps(hh, `${MARIA}\nsecond-level leader`);
    hh.sim.decide(first.djbh, 'agree');
    await hh.app.poll();
    const next = await waitFor(() => hh.sim.approvals()[1], 5000, 'step 3');
    expect(next.approver).toBe(CHEN);
    expect(next.note).toContain(`2. skipped (${MARIA})`);
    await hh.app.deliver();
    await waitFor(
      () => repliesSay(hh, parent, 'Step 2 skipped: Maria Lopez approved an earlier step already.'),
      5000,
      'the skip in the thread',
    );
  });

  it('keeps the next step due across a restart when it could not start, and starts it once after', async () => {
    const hh = await harness();
    const { first } = await askWithSteps(hh, 'second-level leader');
    hh.sim.decide(first.djbh, 'agree');
    // The directory is down as the step is to start: nothing is sent, the step stays due.
    hh.sim.setFaults('department', { html502: true });
    await hh.app.poll();
    expect(hh.sim.requestCounts()['start-approval']).toBe(1);
    await hh.restart(() => hh.sim.clearFaults());
    await hh.app.poll();
    await hh.app.poll();
    expect(hh.sim.approvals().map((a) => a.approver)).toEqual([MARIA, CHEN]);
    expect(hh.sim.requestCounts()['start-approval']).toBe(2);
  });

  it('two replicas polling at once start the next step once', async () => {
    const hh = await harness();
    const { first } = await askWithSteps(hh, 'second-level leader');
    const replica = await hh.startReplica();
    hh.sim.decide(first.djbh, 'agree');
    await Promise.all([hh.app.poll(), replica.poll(), hh.app.poll(), replica.poll()]);
    await Promise.all([hh.app.poll(), replica.poll()]);
    expect(hh.sim.approvals().filter((a) => a.approver === CHEN)).toHaveLength(1);
    expect(hh.sim.requestCounts()['start-approval']).toBe(2);
  });

  it('after a start whose answer was lost and a restart, starts nothing blindly: the requester looks, then presses Start step 2, and it starts once', async () => {
    const hh = await harness();
    const { first, parent } = await askWithSteps(hh, 'second-level leader');
    hh.sim.decide(first.djbh, 'agree');
    hh.sim.setFaults('start-approval', { html502: true });
    await hh.app.poll();
    hh.sim.clearFaults();
    await hh.restart();
    await hh.app.poll();
    await hh.app.poll(new Date(Date.now() + 3_600_000));
    // Not started again by the app: the service may hold it.
    expect(hh.sim.approvals()).toHaveLength(1);
    const note = await waitFor(
      () => replies(hh, parent).find((r) => text(r).includes('may or may not have started')),
      5000,
      'the uncertain step in the thread',
    );
    expect(text(note.blocks)).toContain('"action_id":"start_step"');
    // Someone else cannot start it.
    const value = `${first.djbh}:2`;
    await hh.slack.blockAction(
      hh.user(CHEN),
      { action_id: 'start_step', value },
      { channelId: parent.channel, messageTs: note.ts },
    );
    await hh.app.poll();
    expect(hh.sim.approvals()).toHaveLength(1);
    // Sam looked: not there. Pressed twice, it starts once.
    for (let i = 0; i < 2; i++)
      await hh.slack.blockAction(
        hh.user(SAM),
        { action_id: 'start_step', value },
        { channelId: parent.channel, messageTs: note.ts },
      );
    await hh.app.poll();
    await hh.app.poll();
    expect(hh.sim.approvals()).toHaveLength(2);
    expect(hh.sim.approvals()[1]).toMatchObject({ approver: CHEN });
  });
});
