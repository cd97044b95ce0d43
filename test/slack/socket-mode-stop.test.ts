import { afterEach, describe, expect, it } from 'vitest';
import { SlackRequester } from '../../src/sandbox/slack-requests.ts';
import { waitFor } from '../helpers/harness.ts';
import { type SocketModeApp, startSocketModeApp } from '../helpers/socket-mode-app.ts';

// A stop in Socket Mode is as clean as one over HTTP: the socket stays open until every envelope
// that arrived before it is acknowledged, so someone who pressed Submit just before a deploy
// gets their answer (and one approval), not Slack's "We had some trouble connecting".

let ctx: SocketModeApp | undefined;

afterEach(async () => {
  if (!ctx) return;
  ctx.workspace.beforeCall = undefined;
  await ctx.socket.close();
  await ctx.api.close();
  await ctx.sim.close();
  ctx = undefined;
});

/**
 * Opens the form, then submits it with another approver picked; Slack takes 1.2 s to say who
 * they are, so the form's checks (and its acknowledgement) take ~1.2 s.
 */
async function slowSubmission(app: SocketModeApp, title: string) {
  const { workspace, socket } = app;
  const slack = new SlackRequester({
    workspace,
    eventsUrl: 'http://127.0.0.1:9/unused',
    signingSecret: 'unused',
    responseOrigin: app.api.origin,
  });
  const sam = workspace.userByLogin('sam.taylor@corp.example').id;
  await socket.deliver(
    'slash_commands',
    slack.commandPayload(sam, workspace.channelByName('general').id, title),
  );
  const view = await waitFor(() =>
    [...workspace.views.values()].find((v) =>
      JSON.stringify(v.view).includes('Suggested approver'),
    ),
  );
  const payload = slack.viewSubmissionPayload(view.id, {
    note_input: 'Pressed just before a deploy',
    approver_select: workspace.userByLogin('chen.hao@corp.example').id,
  });
  let arrived: (() => void) | undefined;
  const lookedUp = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  workspace.beforeCall = async (method) => {
    if (!method.startsWith('users.')) return;
    arrived?.();
    await new Promise((r) => setTimeout(r, 1200));
  };
  return {
    submit: () => socket.deliver('interactive', payload, 5000),
    /** Resolves once the submission is in its checks (Slack asked who the approver is). */
    lookedUp,
  };
}

describe('a stop in Socket Mode', () => {
  it('answers a submission that arrived 200 ms before the stop, and starts it once', async () => {
    ctx = await startSocketModeApp();
    const submission = await slowSubmission(ctx, 'Submitted before a stop');
    const acked = submission.submit();
    await submission.lookedUp;
    await new Promise((r) => setTimeout(r, 200));
    const stopped = ctx.app.stop({ drainMs: 0 });
    const ack = await acked;
    expect(ack.response_action).toBe('update');
    await stopped;
    expect(ctx.sim.approvals().map((a) => a.title)).toEqual(['Submitted before a stop']);
    expect(ctx.logs.lines.join('\n')).not.toContain('could not acknowledge');
  }, 120_000);

  it('answers a submission that arrived 1.5 s into the default drain, and starts it once', async () => {
    ctx = await startSocketModeApp();
    const submission = await slowSubmission(ctx, 'Submitted during the drain');
    const stopped = ctx.app.stop({ drainMs: 2000 });
    await new Promise((r) => setTimeout(r, 1500));
    const ack = await submission.submit();
    expect(ack.response_action).toBe('update');
    await stopped;
    expect(ctx.sim.approvals().map((a) => a.title)).toEqual(['Submitted during the drain']);
    expect(ctx.logs.lines.join('\n')).not.toContain('could not acknowledge');
  }, 120_000);
});
