import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackRequester } from '../src/sandbox/slack-requests.ts';
import { startWebApiServer, type WebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator, type Simulator } from '../src/simulator/simulator.ts';
import { createApprovalStores } from '../src/store/approval-stores.ts';
import { openDatabase } from '../src/store/database.ts';
import { AppProcess, freePort } from './helpers/app-process.ts';
import { isRequestMessage, SIGNING_SECRET, waitFor } from './helpers/harness.ts';
import { sampleApproval, seedApproval } from './helpers/outbox-seed.ts';

// SIGTERM while a person's submission is under way: the app finishes it (the approval started
// in the service is recorded, then posted) before it exits, or never starts it.

let sim: Simulator;
let workspace: Workspace;
let api: WebApiServer;
let dir: string;

beforeEach(async () => {
  sim = await createSimulator({ port: 0 });
  workspace = new Workspace({
    people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
  });
  api = await startWebApiServer(workspace);
  dir = mkdtempSync(join(tmpdir(), 'slack-approvals-shutdown-'));
});

afterEach(async () => {
  await api.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A grace longer than any stop takes, however busy the machine: a stop that waits for the grace
 * instead of for the work under way takes all of it, and is caught by the time it took.
 */
const LONG_GRACE_MS = 90_000;

async function appProcess(env: Record<string, string> = {}) {
  const port = await freePort();
  const app = new AppProcess({
    SLACK_BOT_TOKEN: workspace.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: api.apiUrl,
    PORT: String(port),
    APPROVAL_BASE_URL: sim.url,
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'sandbox-app-key',
    DATABASE_URL: join(dir, 'approvals.db'),
    STATUS_POLL_CRON: '* * * * * *',
    LOG_LEVEL: 'info',
    SHUTDOWN_DRAIN_MS: '0',
    ...env,
  });
  const slack = new SlackRequester({
    workspace,
    eventsUrl: `http://127.0.0.1:${port}/slack/events`,
    signingSecret: SIGNING_SECRET,
    responseOrigin: api.origin,
  });
  await app.start();
  return { app, slack };
}

describe('SIGTERM', { timeout: 240_000 }, () => {
  it('carries a submission under way to its end: started in the service, recorded, then posted', async () => {
    // A grace no stop on a busy machine comes near: a stop that waited for it is what fails.
    const first = await appProcess({ SHUTDOWN_GRACE_MS: String(LONG_GRACE_MS) });
    const sam = workspace.userByLogin('sam.taylor@corp.example').id;
    const general = workspace.channelByName('general').id;
    await first.slack.command(sam, general, 'Started at a SIGTERM');
    const view = await waitFor(() =>
      [...workspace.views.values()].find((v) =>
        JSON.stringify(v.view).includes('Suggested approver'),
      ),
    );
    // The service takes 2 s to start it; the process is told to stop 300 ms into that.
    sim.setFaults('start-approval', { latencyMs: 2000 });
    const submitted = first.slack.submitView(view.id, { note_input: 'n' });
    await waitFor(
      () => sim.requestCounts()['start-approval'] > 0,
      120_000,
      'the call to the service',
    );
    await new Promise((r) => setTimeout(r, 300));
    const stopping = Date.now();
    const exit = await first.app.stop();
    await submitted;
    expect(exit).toEqual({ code: 0, signal: null });
    // It waited for the submission, not for the whole grace period.
    expect(Date.now() - stopping).toBeLessThan(LONG_GRACE_MS);
    const output = first.app.output.join('');
    expect(output).not.toContain('approval started but not stored');
    expect(output).toMatch(/"msg":"stopped"/);
    const approval = await waitFor(
      () => sim.approvals()[0],
      120_000,
      'the approval in the service',
    );
    sim.clearFaults();
    // The next process (or another replica) posts what was recorded.
    const second = await appProcess();
    try {
      await waitFor(
        () => workspace.messages.filter((m) => isRequestMessage(m, approval.djbh)).length === 1,
        10_000,
        'the request message',
      );
    } finally {
      await second.app.stop();
    }
  }, 240_000);

  it('stops a poll pass of 200 due approvals: claims nothing more, finishes the checks under way, gives the rest back and closes the database last', async () => {
    // 200 approvals due for a check, as an earlier run left them.
    const seeding = await openDatabase(join(dir, 'approvals.db'));
    const store = createApprovalStores(seeding.db, seeding.dialect);
    const now = new Date();
    for (let i = 0; i < 200; i++) {
      const djbh = `S${String(i).padStart(10, '0')}x`;
      await seedApproval(store, sampleApproval(djbh, { request: { createdAt: now } }), {
        posted: { channel: 'C1', ts: `1.${i}` },
      });
    }
    await seeding.close();
    // Each check takes 300 ms: with 4 at a time, the pass would run for its whole 20 s budget.
    sim.setFaults('approval-status', { latencyMs: 300 });
    const first = await appProcess({
      SHUTDOWN_GRACE_MS: String(LONG_GRACE_MS),
      APPROVAL_TIMEOUT_MS: '2000',
    });
    await waitFor(() => sim.requestCounts()['approval-status'] >= 12, 120_000, 'a pass under way');
    const checksAtStop = sim.requestCounts()['approval-status'];
    const stopping = Date.now();
    const exit = await first.app.stop();
    const stoppedInMs = Date.now() - stopping;
    expect(exit).toEqual({ code: 0, signal: null });
    // No check began after the stop: only those already under way (at most POLL_CONCURRENCY) ended.
    expect(sim.requestCounts()['approval-status'] - checksAtStop).toBeLessThanOrEqual(4);
    // They finished within the grace (no check began after the stop, above, is what says the pass
    // was not waited for), and everything was written before the database closed.
    expect(stoppedInMs).toBeLessThan(LONG_GRACE_MS);
    const output = first.app.output.join('');
    expect(output).toMatch(/"backgroundDone":true[^\n]*"msg":"stopped"/);
    expect(output).not.toContain('poll pass failed');
    // What the pass had claimed but not checked is free again for the next replica at once.
    const after = await openDatabase(join(dir, 'approvals.db'));
    try {
      const held = await after.db
        .selectFrom('tracked_approvals')
        .select('djbh')
        .where('lease_until', '>', Date.now())
        .execute();
      expect(held).toEqual([]);
    } finally {
      await after.close();
    }
  }, 240_000);

  it('starts nothing when the grace left could not see the start through, and says to submit again', async () => {
    // 4 s of grace, and a call to the service may take 2 s: a start needs 5 s left (call and
    // recording), so none begins once the stop has begun.
    const first = await appProcess({ SHUTDOWN_GRACE_MS: '4000', APPROVAL_TIMEOUT_MS: '2000' });
    const sam = workspace.userByLogin('sam.taylor@corp.example').id;
    await first.slack.command(sam, workspace.channelByName('general').id, 'Too late to start');
    const view = await waitFor(() =>
      [...workspace.views.values()].find((v) =>
        JSON.stringify(v.view).includes('Suggested approver'),
      ),
    );
    // Another approver is picked, and Slack is slow to say who they are: the submission is still
    // before its call to the service (the form says "checking…") when the SIGTERM comes.
    let stopping: Promise<unknown> | undefined;
    const calls: string[] = [];
    workspace.beforeCall = async (method) => {
      calls.push(method);
      if (!method.startsWith('users.') || stopping) return;
      stopping = first.app.stop();
      await new Promise((r) => setTimeout(r, 2500));
    };
    await first.slack.submitView(view.id, {
      note_input: 'n',
      approver_select: workspace.userByLogin('chen.hao@corp.example').id,
    });
    await waitFor(() => stopping, 5000, `a lookup during the submission: ${calls.join(', ')}`);
    expect(await stopping).toEqual({ code: 0, signal: null });
    workspace.beforeCall = undefined;
    expect(sim.approvals()).toEqual([]);
    expect(sim.requestCounts()['start-approval']).toBe(0);
    expect(JSON.stringify(workspace.views.get(view.id)?.view)).toContain('The app is restarting');
  }, 240_000);
});
