import { EventEmitter } from 'node:events';
import type { App } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/app.ts';
import { functionExecutedEvent, SlackRequester } from '../../src/sandbox/slack-requests.ts';
import type { Workspace } from '../../src/sandbox/workspace.ts';
import type { Simulator } from '../../src/simulator/simulator.ts';
import { socketModeConnection } from '../../src/slack/receivers/slack-app.ts';
import { waitFor } from '../helpers/harness.ts';
import { type SocketModeApp, startSocketModeApp } from '../helpers/socket-mode-app.ts';

// The manifest's default: the app connects out over Socket Mode (SLACK_APP_TOKEN) instead of
// taking HTTP requests. Slack's side is a WebSocket server on loopback.

let ctx: SocketModeApp;
let sim: Simulator;
let workspace: Workspace;
let socket: SocketModeApp['socket'];
let app: Application;
let slack: SlackRequester;

beforeAll(async () => {
  ctx = await startSocketModeApp();
  ({ sim, workspace, socket, app } = ctx);
  expect(ctx.config.mode).toBe('socket');
  // Builds payloads only; nothing goes over HTTP in this suite.
  slack = new SlackRequester({
    workspace,
    eventsUrl: 'http://127.0.0.1:9/unused',
    signingSecret: 'unused',
    responseOrigin: ctx.api.origin,
  });
});

afterAll(async () => {
  await ctx?.close();
});

describe('Socket Mode', () => {
  it('answers /healthz on PORT once connected, and /readyz counts the connection', async () => {
    expect((await fetch(`http://127.0.0.1:${app.port}/healthz`)).status).toBe(200);
    const ready = await waitFor(async () => {
      const response = await fetch(`http://127.0.0.1:${app.port}/readyz`);
      return response.status === 200 && response;
    });
    expect(await ready.json()).toEqual({ ok: true, approvalService: 'answering' });
  });

  it('runs /approve end to end over the socket: modal, submission, request message', async () => {
    const sam = workspace.userByLogin('sam.taylor@corp.example').id;
    const general = workspace.channelByName('general').id;
    await socket.deliver('slash_commands', slack.commandPayload(sam, general, 'Over the socket'));
    const view = await waitFor(() =>
      [...workspace.views.values()].find((v) =>
        JSON.stringify(v.view).includes('Suggested approver: Maria Lopez'),
      ),
    );
    const ack = await socket.deliver(
      'interactive',
      slack.viewSubmissionPayload(view.id, { note_input: 'Sent through Socket Mode' }),
    );
    expect(ack.response_action).toBe('update');
    slack.applyViewResponse(view.id, ack);
    const approval = await waitFor(() => sim.approvals()[0]);
    expect(approval).toMatchObject({
      title: 'Over the socket',
      requester: 'sam.taylor@corp.example',
      approver: 'maria.lopez@corp.example',
    });
    await waitFor(() => workspace.history(general).find((m) => m.text.includes(approval.djbh)));
  });

  it('publishes App Home on app_home_opened', async () => {
    const maria = workspace.userByLogin('maria.lopez@corp.example').id;
    await socket.deliver('events_api', {
      type: 'event_callback',
      team_id: workspace.teamId,
      api_app_id: 'A0APPROVALS',
      event: {
        type: 'app_home_opened',
        user: maria,
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1.1',
      },
      event_id: 'Ev1',
      event_time: 1,
      authorizations: [{ team_id: workspace.teamId, user_id: workspace.botUserId, is_bot: true }],
    });
    await waitFor(() => workspace.homes.get(maria));
    expect(JSON.stringify(workspace.homes.get(maria))).toContain('Waiting for me (1)');
  });

  it('runs the Workflow Builder step over the socket and completes it once decided', async () => {
    const execution = workspace.startFunction('request_approval_step', {
      requester: workspace.userByLogin('sam.taylor@corp.example').id,
      title: 'Step over the socket',
      note: 'From a workflow.',
      // Sam ran it himself, so he is asked in a modal, and it starts when he presses Start.
      interactivity: workspace.interactivityOf(workspace.userByLogin('sam.taylor@corp.example').id),
    });
    await socket.deliver('events_api', {
      type: 'event_callback',
      team_id: workspace.teamId,
      api_app_id: 'A0APPROVALS',
      event: functionExecutedEvent(execution),
      event_id: 'Ev2',
      event_time: 2,
      authorizations: [{ team_id: workspace.teamId, user_id: workspace.botUserId, is_bot: true }],
    });
    const modal = await waitFor(() =>
      [...workspace.views.values()].find((v) => v.view.callback_id === 'step_confirm_modal'),
    );
    expect(JSON.stringify(modal.view)).toContain('Step over the socket');
    expect(sim.approvals().find((a) => a.title === 'Step over the socket')).toBeUndefined();
    slack.applyViewResponse(
      modal.id,
      await socket.deliver('interactive', slack.viewSubmissionPayload(modal.id)),
    );
    const approval = await waitFor(() =>
      sim.approvals().find((a) => a.title === 'Step over the socket'),
    );
    expect(approval.approver).toBe('maria.lopez@corp.example');
    sim.decide(approval.djbh, 'agree');
    // The service has the approval before the app has recorded it: passes until the decision is
    // seen (on a busy machine a single pass came before the record, and found nothing to check).
    await waitFor(
      async () => {
        await app.poll();
        return execution.state === 'completed';
      },
      5000,
      'the step completed',
    );
    expect(execution.outputs).toMatchObject({
      approval_number: approval.djbh,
      decision: 'approved',
    });
  });
});

describe('socketModeConnection', () => {
  it('follows the Socket Mode client’s connects and disconnects, for readiness', () => {
    const client = new EventEmitter();
    const connected = socketModeConnection({ receiver: { client } } as unknown as App);
    expect(connected?.()).toBe(false);
    client.emit('connected');
    expect(connected?.()).toBe(true);
    client.emit('disconnected');
    expect(connected?.()).toBe(false);
    client.emit('connected');
    client.emit('reconnecting');
    expect(connected?.()).toBe(false);
    expect(socketModeConnection({ receiver: {} } as unknown as App)).toBeUndefined();
  });
});
