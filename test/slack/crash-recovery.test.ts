import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackRequester } from '../../src/sandbox/slack-requests.ts';
import { startWebApiServer, type WebApiServer } from '../../src/sandbox/web-api-server.ts';
import { SlackApiError, Workspace } from '../../src/sandbox/workspace.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { AppProcess, freePort } from '../helpers/app-process.ts';
import { SIGNING_SECRET, waitFor } from '../helpers/harness.ts';

// kill -9 of the real app process at the worst moments, then a restart on the same database:
// each change must reach the thread exactly once.

let sim: Simulator;
let workspace: Workspace;
let api: WebApiServer;
let dir: string;
let app: AppProcess;
let slack: SlackRequester;

beforeEach(async () => {
  sim = await createSimulator({ port: 0 });
  workspace = new Workspace({
    people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
  });
  api = await startWebApiServer(workspace);
  dir = mkdtempSync(join(tmpdir(), 'slack-approvals-crash-'));
  const port = await freePort();
  app = new AppProcess({
    SLACK_BOT_TOKEN: workspace.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: api.apiUrl,
    PORT: String(port),
    APPROVAL_BASE_URL: sim.url,
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'sandbox-app-key',
    DATABASE_URL: join(dir, 'approvals.db'),
    STATUS_POLL_CRON: '* * * * * *',
    LOG_LEVEL: 'warn',
    // A killed attempt's lease must run out before the restarted app takes over.
    ANNOUNCEMENT_LEASE_SECONDS: '3',
    SLACK_TIMEOUT_MS: '1000',
    // Slack may commit a dead attempt's post up to this long after its lease ended; scaled down
    // like the lease, so the restarted app looks once more and posts within the test's waits.
    SLACK_COMMIT_HORIZON_MS: '1500',
  });
  slack = new SlackRequester({
    workspace,
    eventsUrl: `http://127.0.0.1:${port}/slack/events`,
    signingSecret: SIGNING_SECRET,
    responseOrigin: api.origin,
  });
  await app.start();
});

afterEach(async () => {
  workspace.beforeCall = undefined;
  await app.stop();
  await api.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

async function startApproval() {
  const sam = workspace.userByLogin('sam.taylor@corp.example').id;
  await slack.command(sam, workspace.channelByName('general').id, 'Crash test');
  const view = await waitFor(() =>
    [...workspace.views.values()].find((v) =>
      JSON.stringify(v.view).includes('Suggested approver'),
    ),
  );
  await slack.submitView(view.id, { note_input: 'n' });
  return waitFor(() => sim.approvals()[0]);
}

const decisionReplies = (text: string) =>
  workspace.messages.filter((m) => m.threadTs && m.text.includes(text));

describe('crash recovery', { timeout: 240_000 }, () => {
  it('posts a decision once when the app died after posting it but before recording that', async () => {
    const approval = await startApproval();
    const parent = await waitFor(() => workspace.history(workspace.channelByName('general').id)[0]);
    let killed = false;
    workspace.beforeCall = async (method, args) => {
      if (method === 'chat.postMessage' && args.thread_ts && !killed) {
        killed = true;
        await app.kill();
      }
    };
    sim.decide(approval.djbh, 'agree');
    // The post lands in Slack; the app is already dead when the answer comes back.
    await waitFor(
      () => killed && decisionReplies('Approved').length === 1,
      8000,
      'the kill and the post',
    );
    await app.start();
    // Once the killed attempt's lease runs out, the restarted app looks for its post in the
    // thread (by the announcement id in the message metadata) and records it instead of posting.
    await waitFor(
      () => workspace.callsOf('conversations.replies').length > 0,
      8000,
      'the recovery lookup',
    );
    await waitFor(
      () =>
        JSON.stringify(workspace.messages.find((m) => m.ts === parent.ts)?.blocks).includes(
          'Approved',
        ),
      8000,
      'the parent update',
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(decisionReplies('Approved')).toHaveLength(1);
    expect(workspace.callsOf('conversations.replies').length).toBeGreaterThan(0);
  });

  it('posts a decision once when the app died after the service answered but before the post', async () => {
    const approval = await startApproval();
    await waitFor(() => workspace.history(workspace.channelByName('general').id)[0]);
    let killed = false;
    workspace.beforeCall = async (method, args) => {
      if (method === 'chat.postMessage' && args.thread_ts && !killed) {
        killed = true;
        await app.kill();
        throw new SlackApiError('internal_error');
      }
    };
    sim.decide(approval.djbh, 'refuse');
    await waitFor(() => killed, 120_000, 'the kill');
    expect(decisionReplies('Rejected')).toHaveLength(0);
    await app.start();
    await waitFor(() => decisionReplies('Rejected').length > 0, 120_000, 'the reply');
    await new Promise((r) => setTimeout(r, 1500));
    expect(decisionReplies('Rejected')).toHaveLength(1);
  });

  it('posts the request once when the app died between starting the approval and posting it', async () => {
    let killed = false;
    workspace.beforeCall = async (method, args) => {
      if (method === 'chat.postMessage' && !args.thread_ts && !killed) {
        killed = true;
        await app.kill();
        throw new SlackApiError('internal_error');
      }
    };
    const approval = await startApproval();
    await waitFor(() => killed, 120_000, 'the kill');
    await app.start();
    const general = workspace.channelByName('general').id;
    await waitFor(() => workspace.history(general).length > 0, 120_000, 'the request message');
    sim.decide(approval.djbh, 'agree');
    await waitFor(() => decisionReplies('Approved').length > 0, 120_000, 'the reply');
    expect(workspace.history(general).filter((m) => m.text.includes(approval.djbh))).toHaveLength(
      1,
    );
  });
});
