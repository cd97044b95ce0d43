import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { openHome, setDelegate } from '../helpers/delegate-forms.ts';
import { type Harness, harnessPerTest, waitFor } from '../helpers/harness.ts';

// The Workflow Builder step "Request approval" with later steps (its `later_steps` input),
// through the app's HTTP endpoint with signed requests, the simulator over HTTP and the Slack
// stand-in: the requester confirms, the request runs step by step as a template's does, and the
// workflow step completes once, when the last step ends.

const harness = harnessPerTest();
const STEP = 'request_approval_step';
const NOW = new Date('2026-11-23T10:00:00Z');
const SAM = 'sam.taylor@corp.example'; // nearest leader Maria, then Chen Hao, then Zhou Lan
const MARIA = 'maria.lopez@corp.example';
const CHEN = 'chen.hao@corp.example';
const ZHOU = 'zhou.lan@corp.example';
const ALEX = 'alex.kim@corp.example';

const text = (x: unknown) => JSON.stringify(x ?? {});

function confirmationModal(hh: Harness) {
  return waitFor(
    () =>
      [...hh.workspace.views.values()].find(
        (v) => v.user === hh.user(SAM) && v.view.callback_id === 'step_confirm_modal',
      ),
    5000,
    'the confirmation modal',
  );
}

/** Sam runs the workflow with `laterSteps`, is shown them, and presses Start: step 1 starts. */
async function runWithSteps(hh: Harness, laterSteps: string) {
  const { executionId } = await hh.slack.functionExecuted(STEP, {
    requester: hh.user(SAM),
    approver: hh.user(MARIA),
    title: 'Rack switches',
    note: 'Two 48-port switches.',
    channel: hh.channel('general'),
    later_steps: laterSteps,
    interactivity: hh.workspace.interactivityOf(hh.user(SAM)),
  });
  const modal = await confirmationModal(hh);
  const { errors } = await hh.slack.submitView(modal.id);
  expect(errors).toBeUndefined();
  const first = await waitFor(() => hh.sim.approvals()[0], 5000, 'step 1 in the service');
  const execution = hh.workspace.executions.get(executionId);
  return { first, execution, modal };
}

/** Decides the newest approval in the service and lets the app see it (and start what is due). */
async function decideNext(hh: Harness, count: number, how: 'agree' | 'refuse', at?: Date) {
  const step = await waitFor(() => hh.sim.approvals()[count - 1], 5000, `step ${count}`);
  hh.sim.decide(step.djbh, how);
  await hh.app.poll(at);
  await hh.app.poll(at);
  await hh.app.deliver();
  return step;
}

describe('the workflow step with later steps', () => {
  it('shows the later steps, runs each in turn, and completes once, approved, when the last approves', async () => {
    const hh = await harness();
    const { first, execution, modal } = await runWithSteps(hh, `second-level leader, ${ZHOU}`);
    // What will start, steps included, is what Sam was shown.
    expect(text(modal.view)).toContain('Then also ask');
    expect(text(modal.view)).toContain('2. second-level leader');
    expect(text(modal.view)).toContain(`3. ${ZHOU}`);
    expect(first).toMatchObject({ approver: MARIA, requester: SAM, title: 'Rack switches' });

    await decideNext(hh, 1, 'agree');
    // Step 1 approved: the workflow step waits for the rest.
    expect(execution?.state).toBe('running');
    const second = await decideNext(hh, 2, 'agree');
    expect(second.approver).toBe(CHEN);
    expect(execution?.state).toBe('running');
    const third = await decideNext(hh, 3, 'agree');
    expect(third.approver.toLowerCase()).toBe(ZHOU);
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toEqual({
      approval_number: first.djbh,
      decision: 'approved',
      decided_by: hh.user(ZHOU),
      decided_at: expect.any(Number),
      step_deciders: [
        `1. <@${hh.user(MARIA)}>: approved (${first.djbh})`,
        `2. <@${hh.user(CHEN)}>: approved (${second.djbh})`,
        `3. <@${hh.user(ZHOU)}>: approved (${third.djbh})`,
      ].join('\n'),
    });
    expect(execution?.completionCalls).toBe(1);
    await hh.app.poll();
    await hh.app.deliver();
    expect(execution?.completionCalls).toBe(1);
  });

  it('completes rejected at the step that rejects, and starts no later step', async () => {
    const hh = await harness();
    const { first, execution } = await runWithSteps(hh, `second-level leader\n${ZHOU}`);
    await decideNext(hh, 1, 'agree');
    const second = await decideNext(hh, 2, 'refuse');
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toMatchObject({
      approval_number: first.djbh,
      decision: 'rejected',
      decided_by: hh.user(CHEN),
      step_deciders: [
        `1. <@${hh.user(MARIA)}>: approved (${first.djbh})`,
        `2. <@${hh.user(CHEN)}>: rejected (${second.djbh})`,
      ].join('\n'),
    });
    await hh.app.poll(new Date(Date.now() + 3_600_000));
    expect(hh.sim.approvals()).toHaveLength(2);
  });

  it('says which step each is in /approve list and on Home, to the requester and the step’s approver, in their language', async () => {
    const hh = await harness();
    const { first } = await runWithSteps(hh, `second-level leader, ${ZHOU}`);
    await decideNext(hh, 1, 'agree');
    const second = await waitFor(() => hh.sim.approvals()[1], 5000, 'step 2');
    // Chen Hao reads Chinese; Sam English.
    for (const [login, words] of [
      [SAM, 'Step 2 of 3'],
      [CHEN, '第 2 步（共 3 步）'],
    ] as const) {
      const userId = hh.user(login);
      const seen = hh.workspace.ephemeral(userId).length;
      await hh.slack.command(userId, hh.channel('general'), 'list');
      const answer = await waitFor(() => hh.workspace.ephemeral(userId)[seen], 5000, 'the list');
      // On the row of step 2's approval.
      expect(text(answer)).toMatch(new RegExp(`${second.djbh}\` Rack switches — [^\\n]*${words}`));
    }
    const samHome = text(await openHome(hh, SAM));
    expect(samHome).toContain('Step 2 of 3');
    // Step 1, decided, is among Sam's requests too.
    expect(samHome).toMatch(new RegExp(`${first.djbh}[^"]*Step 1 of 3`));
    expect(text(await openHome(hh, CHEN))).toMatch(
      new RegExp(`${second.djbh}[^"]*第 2 步（共 3 步）`),
    );
  });

  it('completes rejected when step 1 rejects', async () => {
    const hh = await harness();
    const { first, execution } = await runWithSteps(hh, 'second-level leader');
    await decideNext(hh, 1, 'refuse');
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toMatchObject({
      approval_number: first.djbh,
      decision: 'rejected',
      decided_by: hh.user(MARIA),
    });
    expect(hh.sim.approvals()).toHaveLength(1);
  });

  it('takes a person inserted from a variable, and a later step whose approver is away goes to their delegate', async () => {
    const hh = await harness({ now: () => NOW });
    await setDelegate(hh, CHEN, ALEX, '2026-12-03');
    const { execution } = await runWithSteps(hh, `<@${hh.user(CHEN)}>`);
    await decideNext(hh, 1, 'agree');
    const second = await waitFor(() => hh.sim.approvals()[1], 5000, 'step 2');
    expect(second.approver).toBe(ALEX);
    // Its first check is due a while after it started, on the app's clock.
    await decideNext(hh, 2, 'agree', new Date(NOW.getTime() + 3_600_000));
    await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
    expect(execution?.outputs).toMatchObject({ decision: 'approved', decided_by: hh.user(ALEX) });
  });

  it('ends the run with an error naming the step when a later step cannot start (the requester has no such leader)', async () => {
    const hh = await harness();
    // Chen Hao's leader is Zhou Lan, who has none above her: no second-level leader.
    const { executionId } = await hh.slack.functionExecuted(STEP, {
      requester: hh.user(CHEN),
      approver: hh.user(MARIA),
      title: 'Rack switches',
      note: 'Two.',
      later_steps: '二级领导',
      interactivity: hh.workspace.interactivityOf(hh.user(CHEN)),
    });
    const modal = await waitFor(
      () =>
        [...hh.workspace.views.values()].find(
          (v) => v.user === hh.user(CHEN) && v.view.callback_id === 'step_confirm_modal',
        ),
      5000,
      'the confirmation modal',
    );
    // Chen reads Chinese: the steps under their Chinese label.
    expect(text(modal.view)).toContain('之后还需审批');
    await hh.slack.submitView(modal.id);
    const first = await decideNext(hh, 1, 'agree');
    const execution = hh.workspace.executions.get(executionId);
    await waitFor(() => execution?.state === 'failed', 5000, 'the step ended');
    expect(execution?.error).toBe(
      `Step 2 of request ${first.djbh} could not be started (the service does not know that approver, or the requester has no such leader), so the request stopped there.`,
    );
    expect(execution?.completionCalls).toBe(1);
    expect(hh.sim.approvals()).toHaveLength(1);
  });

  it('refuses, in words, what is not a step or a login the service knows, and starts nothing', async () => {
    const hh = await harness();
    for (const [typed, words] of [
      ['finance director', '"finance director" is not a login nor a leader rule'],
      ['nobody.here@corp.example', 'the approval service does not know nobody.here@corp.example'],
      ['a, b, c, d, e, f', 'at most 5 steps after the first'],
    ] as const) {
      const { executionId } = await hh.slack.functionExecuted(STEP, {
        requester: hh.user(SAM),
        approver: hh.user(MARIA),
        title: 'Rack switches',
        note: 'Two.',
        later_steps: typed,
        interactivity: hh.workspace.interactivityOf(hh.user(SAM)),
      });
      const execution = hh.workspace.executions.get(executionId);
      await waitFor(() => execution?.state === 'failed', 5000, `refused: ${typed}`);
      expect(execution?.error).toContain(words);
      expect(execution?.error).toContain('nothing was started');
    }
    expect(
      [...hh.workspace.views.values()].some((v) => v.view.callback_id === 'step_confirm_modal'),
    ).toBe(false);
    expect(hh.sim.approvals()).toEqual([]);
  });
});

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `the workflow step with later steps on ${database.name}`,
    () => {
      let created: { url: string; drop(): Promise<void> };
      beforeAll(async () => {
        created = await database.create();
      });
      afterAll(async () => {
        await created?.drop();
      });

      it('keeps the later steps from the question to Start across a restart, and completes once the last step approves', async () => {
        const hh = await harness({ databaseUrl: created.url });
        const { executionId } = await hh.slack.functionExecuted(STEP, {
          requester: hh.user(SAM),
          approver: hh.user(MARIA),
          title: 'Rack switches',
          note: 'Two.',
          later_steps: 'second-level leader',
          interactivity: hh.workspace.interactivityOf(hh.user(SAM)),
        });
        const modal = await confirmationModal(hh);
        // The question was recorded with its steps; Start is answered by the app as it restarted.
        await hh.restart();
        expect((await hh.slack.submitView(modal.id)).errors).toBeUndefined();
        const first = await waitFor(() => hh.sim.approvals()[0], 5000, 'step 1');
        await decideNext(hh, 1, 'agree');
        const second = await decideNext(hh, 2, 'agree');
        const execution = hh.workspace.executions.get(executionId);
        await waitFor(() => execution?.state === 'completed', 5000, 'the step completed');
        expect(execution?.outputs).toMatchObject({
          approval_number: first.djbh,
          decision: 'approved',
          decided_by: hh.user(CHEN),
          step_deciders: `1. <@${hh.user(MARIA)}>: approved (${first.djbh})\n2. <@${hh.user(CHEN)}>: approved (${second.djbh})`,
        });
      });
    },
  );
}
