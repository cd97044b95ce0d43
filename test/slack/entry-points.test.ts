import { describe, expect, it } from 'vitest';
import {
  functionExecutedEvent,
  interactivityOf,
  SlackRequester,
} from '../../src/sandbox/slack-requests.ts';
import type { Message, View } from '../../src/sandbox/workspace.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { openDatabase } from '../../src/store/database.ts';
import { type Harness, harnessPerTest, SIGNING_SECRET, waitFor } from '../helpers/harness.ts';

// The other ways in: a message's "Request approval" shortcut, the ⚡ menu's, and the Workflow
// Builder step, each driven by signed payloads as Slack sends them.

const harness = harnessPerTest();
const STEP = 'request_approval_step';
const SAM = 'sam.taylor@corp.example';
const MARIA = 'maria.lopez@corp.example';

/** The form a shortcut opened, once it is filled in (the suggestion is there). */
function filledForm(hh: Harness, userId: string): Promise<View> {
  return waitFor(
    () =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === userId && JSON.stringify(v.view).includes('Suggested approver'),
      ),
    5000,
    'the filled-in form',
  );
}

/** The element of an input block of a view, by block id. */
function input(view: View, blockId: string): Record<string, unknown> | undefined {
  const blocks = view.view.blocks as Array<{
    block_id?: string;
    element?: Record<string, unknown>;
  }>;
  return blocks.find((b) => b.block_id === blockId)?.element;
}

/** The request message of an approval, wherever it went (a channel, a thread, a DM). */
function requestOf(hh: Harness, djbh: string): Promise<Message> {
  return waitFor(
    () =>
      hh.workspace.messages.find(
        (m) => m.metadata?.event_payload.announcement_id === `${djbh}:request`,
      ),
    5000,
    'the request message',
  );
}

/** The modal a workflow step opened for its requester, once open. */
function confirmationModal(hh: Harness, login = SAM): Promise<View> {
  return waitFor(
    () =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === hh.user(login) && v.view.callback_id === 'step_confirm_modal',
      ),
    5000,
    'the confirmation modal',
  );
}

async function startedApproval(hh: Harness, before: number) {
  return waitFor(() => hh.sim.approvals()[before], 5000, 'the approval in the service');
}

describe('the message shortcut', () => {
  it('opens the form titled with the first line cut at a word, notes the text and its permalink, and posts in the message’s thread', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    const general = hh.channel('general');
    const firstLine = `Please approve ${'the replacement storage rack '.repeat(8)}for <@${hh.user(MARIA)}>`;
    const message = hh.workspace.postAsUser(
      sam,
      general,
      `${firstLine}\nQuote: 2 racks &amp; cabling`,
    );

    const response = await hh.slack.messageShortcut(
      sam,
      general,
      message.ts,
      'request_approval_from_message',
    );
    expect(response.status).toBe(200);
    const view = await filledForm(hh, sam);
    const title = String(input(view, 'title')?.initial_value);
    expect([...title].length).toBeLessThanOrEqual(200);
    // Cut after a whole word of the first line, with an ellipsis.
    expect(title.endsWith('…')).toBe(true);
    expect(firstLine.startsWith(`${title.slice(0, -1)} `)).toBe(true);
    const note = String(input(view, 'note')?.initial_value);
    expect(note).toContain('for @Maria Lopez');
    expect(note).toContain('Quote: 2 racks & cabling');
    expect(note).toMatch(
      new RegExp(`\\n\\nhttps://sandbox\\.slack\\.local/archives/${general}/p\\d+$`),
    );

    const before = hh.sim.approvals().length;
    const { errors } = await hh.slack.submitView(view.id, {});
    expect(errors).toBeUndefined();
    const approval = await startedApproval(hh, before);
    expect(approval.title).toBe(title);
    const request = await requestOf(hh, approval.djbh);
    expect(request).toMatchObject({ channel: general, threadTs: message.ts });
    await waitFor(
      () => JSON.stringify(hh.workspace.views.get(view.id)?.view).includes('posted in the message'),
      5000,
      'the modal saying where the request went',
    );

    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    const thread = hh.workspace.replies(general, message.ts);
    expect(thread.map((m) => m.text).at(-1)).toContain('Approved · 同意');
    // Replies go to the message's thread, never under the reply that is the request.
    expect(hh.workspace.replies(general, request.ts)).toEqual([]);
  });

  it('on the app’s own request card or its thread reply, says to follow it in the thread and opens no form, in the person’s language', async () => {
    const hh = await harness();
    const { approval, parent } = await hh.startApproval(SAM);
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    const reply = await waitFor(() =>
      hh.workspace.replies(parent.channel, parent.ts).find((m) => m.text.includes('Approved')),
    );
    const viewsBefore = hh.workspace.views.size;
    const answerTo = async (login: string, message: Message) => {
      const userId = hh.user(login);
      const seen = new Set([...hh.workspace.views.values()].map((v) => v.id));
      const response = await hh.slack.messageShortcut(
        userId,
        message.channel,
        message.ts,
        'request_approval_from_message',
      );
      expect(response.status).toBe(200);
      const view = await waitFor(
        () => [...hh.workspace.views.values()].find((v) => v.user === userId && !seen.has(v.id)),
        5000,
        'the answer on the app’s own message',
      );
      return JSON.stringify(view.view);
    };
    const onCard = await answerTo(SAM, parent);
    expect(onCard).toContain('Follow and discuss that approval in the message’s thread.');
    expect(onCard).not.toContain('Pending');
    expect(onCard).not.toContain('"type":"input"');
    expect(await answerTo(SAM, reply)).toContain('in the message’s thread');
    // Li Wei's Slack is in Chinese (zh-CN), and nothing has looked her up before.
    expect(await answerTo('li.wei@corp.example', parent)).toContain('请在这条消息的讨论串里');
    expect(hh.workspace.views.size).toBe(viewsBefore + 3);
    // No form was filled in, so nothing more was started.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hh.sim.approvals()).toHaveLength(1);
  });

  it('posts the request in the requester’s DM when the app is not in the message’s channel', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    const random = hh.channel('random');
    const message = hh.workspace.postAsUser(sam, random, 'New monitors for the NOC');
    await hh.slack.messageShortcut(sam, random, message.ts, 'request_approval_from_message');
    const view = await filledForm(hh, sam);
    expect(input(view, 'title')?.initial_value).toBe('New monitors for the NOC');
    const before = hh.sim.approvals().length;
    await hh.slack.submitView(view.id, {});
    const approval = await startedApproval(hh, before);
    const request = await requestOf(hh, approval.djbh);
    expect(request.channel).toBe(hh.workspace.appDm(sam).id);
    expect(request.threadTs).toBeUndefined();
    hh.sim.decide(approval.djbh, 'refuse');
    await hh.app.poll();
    expect(hh.workspace.replies(request.channel, request.ts).at(-1)?.text).toContain('Rejected');
  });
});

describe('the global shortcut', () => {
  it('opens the form with a channel picker and posts in the requester’s DM when none is picked', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    const response = await hh.slack.globalShortcut(sam, 'request_approval');
    expect(response.status).toBe(200);
    const view = await filledForm(hh, sam);
    expect(input(view, 'channel')).toMatchObject({ type: 'conversations_select' });
    const before = hh.sim.approvals().length;
    await hh.slack.submitView(view.id, { title_input: 'Team offsite', note_input: 'Two days.' });
    const approval = await startedApproval(hh, before);
    const request = await requestOf(hh, approval.djbh);
    expect(request.channel).toBe(hh.workspace.appDm(sam).id);
    await waitFor(() =>
      JSON.stringify(hh.workspace.views.get(view.id)?.view).includes(
        'direct messages with the app',
      ),
    );
  });

  it('posts in the channel picked in the form', async () => {
    const hh = await harness();
    const sam = hh.user(SAM);
    await hh.slack.globalShortcut(sam, 'request_approval');
    const view = await filledForm(hh, sam);
    const before = hh.sim.approvals().length;
    await hh.slack.submitView(view.id, {
      title_input: 'Team offsite',
      note_input: 'Two days.',
      channel_select: hh.channel('general'),
    });
    const approval = await startedApproval(hh, before);
    const request = await requestOf(hh, approval.djbh);
    expect(request).toMatchObject({ channel: hh.channel('general') });
    expect(request.threadTs).toBeUndefined();
  });
});

describe('the Workflow Builder step', () => {
  // Sam runs the workflow himself (Workflow Builder names him in `interactivity`), so he is asked
  // right away in a modal, and the step starts when he presses Start there; runs by someone else
  // are in the next describe.
  const inputs = (hh: Harness, extra: Record<string, unknown> = {}) => ({
    requester: hh.user(SAM),
    approver: hh.user(MARIA),
    title: 'Quarterly budget',
    note: 'Marketing, Q4.',
    channel: hh.channel('general'),
    interactivity: hh.workspace.interactivityOf(hh.user(SAM)),
    ...extra,
  });

  /** Runs the step as Sam and presses Start in the modal it opens for him. */
  async function runConfirmed(hh: Harness, stepInputs: Record<string, unknown>) {
    const run = await hh.slack.functionExecuted(STEP, stepInputs);
    const { errors } = await hh.slack.submitView((await confirmationModal(hh)).id);
    expect(errors).toBeUndefined();
    return run;
  }

  it('asks the requester who ran it in a modal showing what will start, and starts only on their Start', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const modal = await confirmationModal(hh);
    const shown = JSON.stringify(modal.view);
    expect(shown).toContain('*in your name*');
    expect(shown).toContain('Quarterly budget');
    expect(shown).toContain('Marketing, Q4.');
    expect(shown).toContain(`<@${hh.user(MARIA)}>`);
    expect(shown).toContain(`<#${hh.channel('general')}>`);
    expect(modal.view.submit).toMatchObject({ text: 'Start' });
    expect(modal.view.close).toMatchObject({ text: 'Cancel' });
    // Opened with the run's pointer, through the step's own token.
    expect(hh.workspace.callsOf('views.open').map((c) => c.auth)).toEqual(['workflow']);
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toEqual([]);
    expect(hh.workspace.executions.get(executionId)?.state).toBe('running');

    // Anyone else's submission of it (Slack would not send one) starts nothing.
    const forged = hh.slack.viewSubmissionPayload(modal.id);
    forged.user = { id: hh.user(MARIA), username: 'maria', team_id: hh.workspace.teamId };
    expect((await hh.slack.interaction(forged)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toEqual([]);

    await hh.slack.submitView(modal.id);
    const approval = await startedApproval(hh, 0);
    expect(approval).toMatchObject({ title: 'Quarterly budget', requester: SAM, approver: MARIA });
    expect(hh.workspace.executions.get(executionId)?.state).toBe('running');
  });

  it('ends the step with a reason when the requester cancels the modal', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const modal = await confirmationModal(hh);
    expect((await hh.slack.closeView(modal.id))?.status).toBe(200);
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toBe(
      'The requester cancelled this approval before it started. Nothing was started.',
    );
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('asks in a DM instead when the modal cannot be opened (the pointer is no longer good)', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(
      STEP,
      inputs(hh, { interactivity: interactivityOf(hh.user(SAM)) }),
    );
    const dm = hh.workspace.appDm(hh.user(SAM)).id;
    const asked = await waitFor(
      () =>
        hh.workspace.messages.find(
          (m) => m.channel === dm && JSON.stringify(m.blocks).includes('step_confirm_start'),
        ),
      5000,
      'the question in the requester’s DM',
    );
    expect(JSON.stringify(asked.blocks)).toContain('Quarterly budget');
    expect(hh.workspace.callsOf('views.open')[0]?.response).toMatchObject({ ok: false });
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toEqual([]);
    expect(hh.workspace.executions.get(executionId)?.state).toBe('running');
  });

  it('starts the approval, posts it like /approve, and completes the step once with the decision', async () => {
    const hh = await harness();
    const { response, executionId } = await runConfirmed(hh, inputs(hh));
    expect(response.status).toBe(200);
    const approval = await startedApproval(hh, 0);
    expect(approval).toMatchObject({ title: 'Quarterly budget', approver: MARIA });
    const request = await requestOf(hh, approval.djbh);
    expect(request.channel).toBe(hh.channel('general'));
    await waitFor(() =>
      hh.workspace
        .callsOf('chat.postMessage')
        .some((c) => c.args.channel === hh.user(MARIA) || String(c.args.text).includes('asks')),
    );
    const execution = hh.workspace.executions.get(executionId);
    expect(execution?.state).toBe('running');

    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toEqual({
      approval_number: approval.djbh,
      decision: 'approved',
      decided_by: hh.user(MARIA),
      decided_at: expect.any(Number),
    });
    expect(execution?.completionCalls).toBe(1);
    // Completed with the bot token: the step's own token is not meant to last days.
    expect(hh.workspace.callsOf('functions.completeSuccess').map((c) => c.auth)).toEqual(['bot']);
    await hh.app.poll();
    expect(execution?.completionCalls).toBe(1);
  });

  it('suggests the approver from the org chart when the step names none, and names them in the confirmation', async () => {
    const hh = await harness();
    await hh.slack.functionExecuted(STEP, inputs(hh, { approver: null, channel: null }));
    const modal = await confirmationModal(hh);
    expect(JSON.stringify(modal.view)).toContain(`*Approver*\\n<@${hh.user(MARIA)}>`);
    expect(JSON.stringify(modal.view)).not.toContain('nearest leader in the org chart');
    await hh.slack.submitView(modal.id);
    const approval = await startedApproval(hh, 0);
    expect(approval.approver).toBe(MARIA);
    // No channel: the requester's DM.
    expect((await requestOf(hh, approval.djbh)).channel).toBe(hh.workspace.appDm(hh.user(SAM)).id);
  });

  it('ends the step with an error saying why when the service refuses, starting nothing', async () => {
    const hh = await harness();
    hh.sim.setFaults('start-approval', { html502: true });
    const { executionId } = await runConfirmed(hh, inputs(hh));
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 8000, 'the step failed');
    expect(execution?.error).toContain('approval service');
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('ends the step with an error for a title too long or an approver who is the requester', async () => {
    const hh = await harness();
    const { executionId } = await runConfirmed(
      hh,
      inputs(hh, { title: 'x'.repeat(201), approver: hh.user(SAM) }),
    );
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain('Title: Too long for the approval service: 201 characters');
    expect(execution?.error).toContain('Approver: You cannot approve your own request');
  });

  it('ends the step with an error naming an approver the approval service does not know, starting nothing', async () => {
    const hh = await harness();
    const personal = hh.workspace.users.get(hh.user(MARIA));
    if (!personal) throw new Error('no Slack user for Maria');
    personal.email = 'maria@personal.example';
    const { executionId } = await runConfirmed(hh, inputs(hh));
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain('The approval service does not know maria@personal.example');
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('starts one approval when Slack delivers the same step event twice', async () => {
    const hh = await harness();
    const execution = hh.workspace.startFunction(STEP, inputs(hh));
    const event = functionExecutedEvent(execution);
    const [a, b] = await Promise.all([
      hh.slack.event(event),
      hh.slack.event(event, { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await hh.slack.submitView((await confirmationModal(hh)).id);
    await startedApproval(hh, 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(hh.sim.approvals()).toHaveLength(1);
  });

  it('completes the step once when the app restarts between the start and the decision', async () => {
    const hh = await harness();
    const { executionId } = await runConfirmed(hh, inputs(hh));
    const approval = await startedApproval(hh, 0);
    await requestOf(hh, approval.djbh);
    await hh.restart(() => {
      hh.sim.decide(approval.djbh, 'refuse');
    });
    await hh.app.poll();
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toMatchObject({ decision: 'rejected' });
    expect(execution?.completionCalls).toBe(1);
  });

  it('hands a Start pressed on a stopping replica to another, which starts it once: the run is never failed', async () => {
    const hh = await harness();
    const other = await hh.startReplica();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const modal = await confirmationModal(hh);
    // The replica the Start reaches is told to stop while it handles it, with too little grace
    // left to see a start through (a call to the service may take 2 s, and its recording).
    let stopping: Promise<void> | undefined;
    hh.workspace.beforeCall = async () => {
      if (stopping) return;
      stopping = hh.app.stop({ graceMs: 4000 });
      await new Promise((r) => setTimeout(r, 100));
    };
    const { errors } = await hh.slack.submitView(modal.id);
    expect(errors).toBeUndefined();
    await waitFor(() => stopping !== undefined, 5000, 'the stop during the Start');
    await stopping;
    hh.workspace.beforeCall = undefined;
    const execution = hh.workspace.executions.get(executionId);
    expect(hh.sim.approvals()).toEqual([]);
    expect(execution?.state).toBe('running');
    // The other replica's next sweep starts it, in the requester's name, once.
    await other.poll();
    const approval = await startedApproval(hh, 0);
    expect(approval).toMatchObject({ title: 'Quarterly budget', requester: SAM, approver: MARIA });
    await requestOf(hh, approval.djbh);
    await other.poll();
    expect(hh.sim.approvals()).toHaveLength(1);
    expect(execution?.state).toBe('running');
    hh.sim.decide(approval.djbh, 'agree');
    await other.poll();
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toMatchObject({ decision: 'approved' });
    await hh.restart();
  });

  it('completes the step once when Slack answers 5xx after taking the completion', async () => {
    let offset = 0;
    const hh = await harness({ now: () => new Date(Date.now() + offset) });
    const { executionId } = await runConfirmed(hh, inputs(hh));
    const approval = await startedApproval(hh, 0);
    await requestOf(hh, approval.djbh);
    hh.faults.failAfterCommit('functions.completeSuccess', 503);
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    offset += 15 * 60_000;
    await hh.app.deliver();
    const execution = hh.workspace.executions.get(executionId);
    expect(execution?.state).toBe('completed');
    expect(execution?.outputs).toMatchObject({ decision: 'approved' });
    // Slack took the first call; the retry was told the step is done, and took that as delivered.
    const calls = hh.workspace.callsOf('functions.completeSuccess').map((c) => c.response);
    expect(calls[0]).toEqual({ ok: true });
    expect(calls.slice(1)).toEqual(
      Array(calls.length - 1).fill({ ok: false, error: 'execution_not_in_running_state' }),
    );
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      const store = createApprovalStores(db.db, db.dialect);
      const open = [
        ...(await store.pendingAnnouncements(100)),
        ...(await store.failedAnnouncements(100)),
      ];
      expect(open.map((a) => a.id)).not.toContain(`${approval.djbh}:step-complete`);
    } finally {
      await db.close();
    }
  });

  it('ends the step with an error once the app stops following an undecided approval', async () => {
    const hh = await harness({ env: { POLL_GIVE_UP_DAYS: '1' } });
    const { executionId } = await runConfirmed(hh, inputs(hh));
    const approval = await startedApproval(hh, 0);
    await requestOf(hh, approval.djbh);
    await hh.app.poll(new Date(Date.now() + 2 * 86_400_000));
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain(`Approval ${approval.djbh} had no decision after 1 days`);
  });
});

describe('the Workflow Builder step run by someone other than its requester', () => {
  const PRIYA = 'priya.nair@corp.example';
  const ALEX = 'alex.kim@corp.example';
  // Priya runs a workflow that names Sam as the requester.
  const inputs = (hh: Harness, runBy: string | null = PRIYA) => ({
    requester: hh.user(SAM),
    approver: hh.user(MARIA),
    title: 'Termination of J. Doe',
    note: 'Effective at the end of the month.',
    channel: hh.channel('general'),
    ...(runBy ? { interactivity: interactivityOf(hh.user(runBy)) } : {}),
  });

  /** The question in Sam's DM, once posted. */
  function question(hh: Harness): Promise<Message> {
    const dm = hh.workspace.appDm(hh.user(SAM)).id;
    return waitFor(
      () =>
        hh.workspace.messages.find(
          (m) => m.channel === dm && JSON.stringify(m.blocks).includes('step_confirm_start'),
        ),
      5000,
      'the question in the requester’s DM',
    );
  }

  function click(
    hh: Harness,
    login: string,
    button: 'start' | 'decline',
    asked: Message,
    executionId: string,
  ) {
    return hh.slack.blockAction(
      hh.user(login),
      { action_id: `step_confirm_${button}`, value: executionId, block_id: 'step_confirmation' },
      { channelId: asked.channel, messageTs: asked.ts },
    );
  }

  it('starts nothing until the requester presses Start, then starts it in their name', async () => {
    const hh = await harness();
    const { response, executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    expect(response.status).toBe(200);
    const asked = await question(hh);
    // Who wants what, for which approver, where it will be posted.
    const shown = JSON.stringify(asked.blocks);
    expect(shown).toContain(`<@${hh.user(PRIYA)}> ran a workflow`);
    expect(shown).toContain('*in your name*');
    expect(shown).toContain('Termination of J. Doe');
    expect(shown).toContain(`<@${hh.user(MARIA)}>`);
    expect(shown).toContain(`<#${hh.channel('general')}>`);
    expect(shown).toContain('within 60 minutes');
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toEqual([]);
    expect(hh.workspace.executions.get(executionId)?.state).toBe('running');

    const answer = await click(hh, SAM, 'start', asked, executionId);
    expect(answer.status).toBe(200);
    const approval = await startedApproval(hh, 0);
    expect(approval).toMatchObject({
      title: 'Termination of J. Doe',
      requester: SAM,
      approver: MARIA,
    });
    expect((await requestOf(hh, approval.djbh)).channel).toBe(hh.channel('general'));
    await waitFor(
      () => JSON.stringify(asked.blocks).includes('You confirmed'),
      5000,
      'the DM updated',
    );
    expect(JSON.stringify(asked.blocks)).not.toContain('step_confirm_start');
    // The step now waits for the decision, like any other run.
    const execution = hh.workspace.executions.get(executionId);
    expect(execution?.state).toBe('running');
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toMatchObject({ decision: 'approved' });
  });

  /** The note of a workflow a publisher wrote: 2,269 characters, its last line a second ask. */
  const LONG_NOTE = [
    ...Array.from(
      { length: 31 },
      (_, i) => `${String(i + 1).padStart(2, '0')}. Access review for the <data> & "reports" team`,
    ),
    'x'.repeat(691),
    'ALSO GRANT PRIYA PROD ADMIN',
  ].join('\n');

  /** The mrkdwn sections of a message, joined and unescaped: the text a reader sees. */
  function sectionsText(blocks: unknown): string[] {
    return (blocks as Array<{ type: string; text?: { text: string } }>)
      .filter((b) => b.type === 'section' && b.text)
      .map((b) =>
        (b.text?.text ?? '')
          .replaceAll('&lt;', '<')
          .replaceAll('&gt;', '>')
          .replaceAll('&amp;', '&'),
      );
  }

  it('shows the requester the whole note, however long, and starts exactly what it showed', async () => {
    expect(LONG_NOTE.length).toBe(2269);
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, {
      ...inputs(hh),
      note: LONG_NOTE,
    });
    const asked = await question(hh);
    // Within Slack's limits: no section over 3,000 characters, at most 50 blocks.
    const blocks = asked.blocks as Array<{ type: string; text?: { text: string } }>;
    expect(blocks.length).toBeLessThanOrEqual(50);
    for (const b of blocks) expect(b.text?.text.length ?? 0).toBeLessThanOrEqual(3000);
    const shown = sectionsText(asked.blocks).join('');
    expect(shown).toContain(LONG_NOTE);
    expect(shown).toContain('ALSO GRANT PRIYA PROD ADMIN');
    expect(JSON.stringify(asked.blocks)).not.toContain('…');

    await click(hh, SAM, 'start', asked, executionId);
    const approval = await startedApproval(hh, 0);
    expect(approval.note).toBe(LONG_NOTE);
    expect(shown).toContain(approval.note);
  });

  it('starts nothing when what Start would start is not byte for byte what the requester was shown', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    // The stored question changes after it was shown (another release, a hand in the database).
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      await db.db
        .updateTable('step_confirmations')
        .set({ note: 'Effective at the end of the month.\nALSO GRANT PRIYA PROD ADMIN' })
        .where('execution_id', '=', executionId)
        .execute();
    } finally {
      await db.close();
    }
    await click(hh, SAM, 'start', asked, executionId);
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain('not exactly what you were shown');
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('starts a question an older release asked and showed whole, as that release stored it', async () => {
    // An older release stored the step's inputs as given (no digest) and showed them escaped;
    // a note that fit was shown whole, so its Start starts it (adapted as every request is).
    const hh = await harness();
    const note = "Don't forget the 'prod' cluster.\n";
    const { executionId } = await hh.slack.functionExecuted(STEP, { ...inputs(hh), note });
    const asked = await question(hh);
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      await db.db
        .updateTable('step_confirmations')
        .set({ note, shown_digest: null })
        .where('execution_id', '=', executionId)
        .execute();
    } finally {
      await db.close();
    }
    await click(hh, SAM, 'start', asked, executionId);
    const approval = await startedApproval(hh, 0);
    expect(approval.note).toBe('Don’t forget the ’prod’ cluster.');
    expect(hh.workspace.executions.get(executionId)?.state).toBe('running');
  });

  it('starts nothing for a question an older release asked and showed cut', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      // Over the 1,980 characters the older release's note field showed: it ended in "…".
      await db.db
        .updateTable('step_confirmations')
        .set({ note: `${'x'.repeat(1990)}\nALSO GRANT PRIYA PROD ADMIN`, shown_digest: null })
        .where('execution_id', '=', executionId)
        .execute();
    } finally {
      await db.close();
    }
    await click(hh, SAM, 'start', asked, executionId);
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain('not exactly what you were shown');
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('refuses a note too long to be shown whole, starting and asking nothing', async () => {
    // An install that raised the note limit: 30,000 ampersands escape to 150,000 characters.
    const hh = await harness({ env: { APPROVAL_NOTE_LIMIT: '60000' } });
    const { executionId } = await hh.slack.functionExecuted(STEP, {
      ...inputs(hh),
      note: '&'.repeat(30_000),
    });
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain('too long to show the requester in full');
    const dm = hh.workspace.appDm(hh.user(SAM)).id;
    expect(hh.workspace.messages.filter((m) => m.channel === dm)).toEqual([]);
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('refuses a click by anyone but the requester, and starts nothing', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    for (const login of [PRIYA, ALEX]) {
      const seen = hh.workspace.ephemeral(hh.user(login)).length;
      expect((await click(hh, login, 'start', asked, executionId)).status).toBe(200);
      const told = await waitFor(() => hh.workspace.ephemeral(hh.user(login))[seen]);
      expect(told.text).toBe(
        `Only <@${hh.user(SAM)}> can answer this: the approval would be started in their name.`,
      );
    }
    // Declining is Sam's alone too.
    await click(hh, ALEX, 'decline', asked, executionId);
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toEqual([]);
    expect(hh.workspace.executions.get(executionId)?.state).toBe('running');
    expect(JSON.stringify(asked.blocks)).toContain('step_confirm_start');
    // Sam can still answer.
    await click(hh, SAM, 'start', asked, executionId);
    await startedApproval(hh, 0);
  });

  it('ends the step with the reason when the requester declines', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    await click(hh, SAM, 'decline', asked, executionId);
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toBe(
      'The requester declined to start this approval in their name. Nothing was started.',
    );
    await waitFor(() => JSON.stringify(asked.blocks).includes('You declined'));
    // A Start after the Decline (another tab) changes nothing.
    const seen = hh.workspace.ephemeral(hh.user(SAM)).length;
    await click(hh, SAM, 'start', asked, executionId);
    const told = await waitFor(() => hh.workspace.ephemeral(hh.user(SAM))[seen]);
    expect(told.text).toContain('already answered');
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('closes a declined step whose run Slack no longer knows, instead of ending it at every pass, and purges it later', async () => {
    let clock = new Date();
    const hh = await harness({ now: () => clock, env: { RETENTION_DAYS: '1' } });
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    // The workflow was deleted meanwhile: Slack answers function_execution_not_found.
    hh.workspace.executions.delete(executionId);
    await click(hh, SAM, 'decline', asked, executionId);
    await waitFor(() => JSON.stringify(asked.blocks).includes('You declined'));
    const ended = () =>
      hh.workspace
        .callsOf('functions.completeError')
        .filter((c) => c.args.function_execution_id === executionId);
    await waitFor(() => ended().length === 1, 5000, 'the attempt to end the step');
    expect(ended()[0]?.response).toEqual({ ok: false, error: 'function_execution_not_found' });
    // Slack's answer is seen before the app records the step closed: a pass in between would
    // rightly try again (on a busy machine, one did). Wait for the record, not for a fast machine.
    await waitFor(
      async () => {
        const db = await openDatabase(hh.env.DATABASE_URL);
        try {
          const row = await db.db
            .selectFrom('step_confirmations')
            .select('step_closed')
            .where('execution_id', '=', executionId)
            .executeTakeFirst();
          return row?.step_closed === 1;
        } finally {
          await db.close();
        }
      },
      5000,
      'the step recorded closed',
    );
    // Before, every pass asked Slack again, and the confirmation was never purged.
    await hh.app.poll();
    await hh.app.poll();
    expect(ended()).toHaveLength(1);
    clock = new Date(clock.getTime() + 2 * 86_400_000);
    expect((await hh.app.purge())?.confirmations).toBe(1);
  });

  it('ends the step when the requester does not answer in time, and a late Start starts nothing', async () => {
    let offset = 0;
    const hh = await harness({
      now: () => new Date(Date.now() + offset),
      env: { WORKFLOW_CONFIRM_MINUTES: '30' },
    });
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh, null));
    const asked = await question(hh);
    // No interactivity (a scheduled workflow): nobody is named as having run it.
    expect(JSON.stringify(asked.blocks)).toContain('A workflow wants to start an approval');
    expect(JSON.stringify(asked.blocks)).toContain('within 30 minutes');
    const execution = hh.workspace.executions.get(executionId);
    offset = 29 * 60_000;
    await hh.app.poll();
    expect(execution?.state).toBe('running');
    offset = 31 * 60_000;
    await hh.app.poll();
    expect(execution?.state).toBe('failed');
    expect(execution?.error).toBe(
      'The requester did not confirm within 30 minutes, so no approval was started in their name.',
    );
    // The confirmation is edited by the outbox after the pass: wait for it, not for a fast machine.
    await waitFor(() => JSON.stringify(asked.blocks).includes('No answer in time'));
    await click(hh, SAM, 'start', asked, executionId);
    await new Promise((r) => setTimeout(r, 200));
    expect(hh.sim.approvals()).toEqual([]);
  });

  /** Leaves the confirmation as a crash between Start and its outcome would: `starting`. */
  async function leftStarting(hh: Harness, executionId: string, at: Date) {
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      // The question is seen in the DM before the app records where it asked, which the outcome's
      // edit needs: wait for the record (on a busy machine the sweep came first, and edited nothing).
      await waitFor(
        async () =>
          (
            await db.db
              .selectFrom('step_confirmations')
              .select('asked_ts')
              .where('execution_id', '=', executionId)
              .executeTakeFirst()
          )?.asked_ts,
        5000,
        'where the question was asked, recorded',
      );
      await db.db
        .updateTable('step_confirmations')
        .set({ state: 'starting', reason: null, answered_at: at.getTime() })
        .where('execution_id', '=', executionId)
        .execute();
    } finally {
      await db.close();
    }
  }

  it('ends the step with a reason when the app stopped in the middle of a Start and no approval was recorded', async () => {
    let offset = 0;
    const hh = await harness({ now: () => new Date(Date.now() + offset) });
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    await leftStarting(hh, executionId, new Date(Date.now() + offset));
    const execution = hh.workspace.executions.get(executionId);
    // A Start a few seconds old may still be under way.
    offset += 60_000;
    await hh.app.poll();
    expect(execution?.state).toBe('running');
    offset += 5 * 60_000;
    await hh.app.poll();
    await waitFor(() => execution?.state === 'failed', 5000, 'the step failed');
    expect(execution?.error).toContain('The app stopped while starting this approval');
    await waitFor(() => JSON.stringify(asked.blocks).includes('could not start'));
    expect(hh.sim.approvals()).toEqual([]);
  });

  it('keeps a Start the app stopped in the middle of as started when its approval was recorded', async () => {
    let offset = 0;
    const hh = await harness({ now: () => new Date(Date.now() + offset) });
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    await click(hh, SAM, 'start', asked, executionId);
    const approval = await startedApproval(hh, 0);
    await waitFor(() => JSON.stringify(asked.blocks).includes('You confirmed'));
    // As if the app had stopped after recording the approval, before settling the confirmation.
    await leftStarting(hh, executionId, new Date(Date.now() + offset));
    offset += 6 * 60_000;
    await hh.app.poll();
    const db = await openDatabase(hh.env.DATABASE_URL);
    try {
      const row = await db.db
        .selectFrom('step_confirmations')
        .select(['state', 'step_closed'])
        .where('execution_id', '=', executionId)
        .executeTakeFirst();
      expect(row).toEqual({ state: 'started', step_closed: 0 });
    } finally {
      await db.close();
    }
    const execution = hh.workspace.executions.get(executionId);
    expect(execution?.state).toBe('running');
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
  });

  it('keeps waiting across a restart, and starts one approval however many times Start is pressed, on whichever replica', async () => {
    const hh = await harness();
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh));
    const asked = await question(hh);
    await hh.restart();
    const replica = await hh.startReplica();
    const onReplica = new SlackRequester({
      workspace: hh.workspace,
      eventsUrl: `http://127.0.0.1:${replica.port}/slack/events`,
      signingSecret: SIGNING_SECRET,
      responseOrigin: hh.env.SLACK_API_URL.replace(/\/api\/$/, ''),
    });
    const press = () =>
      onReplica.blockAction(
        hh.user(SAM),
        { action_id: 'step_confirm_start', value: executionId },
        { channelId: asked.channel, messageTs: asked.ts },
      );
    const answers = await Promise.all([
      click(hh, SAM, 'start', asked, executionId),
      click(hh, SAM, 'start', asked, executionId),
      press(),
      press(),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    await startedApproval(hh, 0);
    await new Promise((r) => setTimeout(r, 500));
    expect(hh.sim.approvals()).toHaveLength(1);
  });

  it('does not start at once when the requester ran the workflow: running it is not agreeing to this approval', async () => {
    const hh = await harness();
    // Sam ran it (he clicked something in the workflow), but the pointer no longer opens a modal.
    const { executionId } = await hh.slack.functionExecuted(STEP, inputs(hh, SAM));
    const asked = await question(hh);
    expect(JSON.stringify(asked.blocks)).toContain('Termination of J. Doe');
    await new Promise((r) => setTimeout(r, 300));
    expect(hh.sim.approvals()).toEqual([]);
    await click(hh, SAM, 'start', asked, executionId);
    expect((await startedApproval(hh, 0)).requester).toBe(SAM);
  });
});
