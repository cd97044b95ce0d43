import { describe, expect, it } from 'vitest';
import { SlackRequester } from '../../src/sandbox/slack-requests.ts';
import { harnessPerTest, SIGNING_SECRET, waitFor } from '../helpers/harness.ts';

// Requests a real Slack never sends, and Slack on a bad day, through the app's real HTTP receiver:
// every one gets an answer within 3 s, none a 5xx, and the app keeps serving.

const harness = harnessPerTest();
const FORM = 'application/x-www-form-urlencoded';
const payload = (body: unknown) =>
  new URLSearchParams({ payload: JSON.stringify(body) }).toString();

describe('malformed signed requests', () => {
  it('answers a JSON body of null with 400 and keeps serving', async () => {
    const h = await harness();
    const response = await h.slack.send('null', 'application/json');
    expect(response.status).toBe(400);
    expect((await h.slack.send('payload=null', FORM)).status).toBe(400);
    // Still serving: the next /approve opens the form.
    await h.openModal('sam.taylor@corp.example');
    const refused = h.logs.entries().filter((e) => e.msg === 'slack request refused');
    expect(refused).toHaveLength(2);
    expect(refused.every((e) => e.level === 40 && !('err' in e))).toBe(true);
  });

  it.each([
    ['actions: null', { type: 'block_actions', user: { id: 'U1' }, actions: null }],
    ['an event of null', { type: 'event_callback', event: null }],
    ['an event that is a string', { type: 'event_callback', event: 'app_home_opened' }],
    [
      'a submission without user',
      { type: 'view_submission', view: { id: 'V1', callback_id: 'x' } },
    ],
    ['a submission without view', { type: 'view_submission', user: { id: 'U1' } }],
    [
      'an approver login that is not a string',
      {
        type: 'view_submission',
        user: { id: 'U1' },
        view: {
          id: 'V1',
          callback_id: 'approval_request',
          state: { values: { approver_login: { approver_login_input: { value: 42 } } } },
        },
      },
    ],
    [
      'a workflow step event without its function',
      { type: 'event_callback', event: { type: 'function_executed', inputs: {} } },
    ],
    [
      'a workflow step event whose inputs are a string',
      {
        type: 'event_callback',
        event: {
          type: 'function_executed',
          function: { callback_id: 'request_approval_step' },
          function_execution_id: 'Fx1',
          inputs: 'x',
        },
      },
    ],
    [
      'a message shortcut without a trigger id',
      { type: 'message_action', user: { id: 'U1' }, callback_id: 'x' },
    ],
    ['an array', [1, 2]],
  ])('answers %s with 400', async (_what, body) => {
    const h = await harness();
    const response = await h.slack.send(payload(body), FORM);
    expect(response.status).toBe(400);
  });

  it('refuses an unsigned or stale request with 401', async () => {
    const h = await harness();
    expect((await h.slack.send('null', 'application/json', { signature: 'v0=00' })).status).toBe(
      401,
    );
    const stale = Math.floor(Date.now() / 1000) - 600;
    expect((await h.slack.send('{}', 'application/json', { timestamp: stale })).status).toBe(401);
  });
});

describe('logs', () => {
  it('writes a routine failure as one line with its message and code, without a stack', async () => {
    const h = await harness();
    // A person Slack does not know (users.info answers user_not_found) runs /approve status.
    const fields = h.slack.commandPayload(
      h.user('sam.taylor@corp.example'),
      h.channel('general'),
      'list',
    );
    fields.user_id = 'U0NOBODY';
    const response = await h.slack.send(new URLSearchParams(fields).toString(), FORM);
    expect(response.status).toBe(200);
    await waitFor(
      () => h.logs.lines.some((l) => l.includes('user_not_found')),
      5000,
      'the log line',
    );
    const line = h.logs.entries().find((e) => JSON.stringify(e).includes('user_not_found'));
    expect(line?.level).toBe(40);
    expect(JSON.stringify(h.logs.entries())).not.toContain('"stack"');
    // …and the person is told, not left in silence.
    // (The stand-in's response_url still names the user the payload was built for.)
    const sam = h.user('sam.taylor@corp.example');
    await waitFor(() => h.workspace.ephemeral(sam).length > 0, 5000, 'the reply');
    expect(h.workspace.ephemeral(sam)[0]?.text).toContain('Something went wrong');
  });
});

describe('payloads no listener takes', () => {
  it.each([
    [
      'another block action',
      { type: 'block_actions', user: { id: 'U1' }, actions: [{ action_id: 'other' }] },
    ],
    [
      'a global shortcut',
      { type: 'shortcut', user: { id: 'U1' }, callback_id: 'x', trigger_id: 't' },
    ],
    [
      'a message shortcut',
      { type: 'message_action', user: { id: 'U1' }, callback_id: 'x', trigger_id: 't' },
    ],
    [
      'a closed view',
      { type: 'view_closed', user: { id: 'U1' }, view: { id: 'V1', callback_id: 'x' } },
    ],
    ['an options request', { type: 'block_suggestion', user: { id: 'U1' }, action_id: 'x' }],
    ['an unknown type', { type: 'something_new' }],
    // Names every object inherits: not payload types of ours.
    ['a type of toString', { type: 'toString' }],
    ['a type of constructor', { type: 'constructor' }],
    ['a type of __proto__', { type: '__proto__' }],
    ['a type of hasOwnProperty', { type: 'hasOwnProperty', user: { id: 'U1' } }],
    [
      'a submission of an unknown form',
      { type: 'view_submission', user: { id: 'U1' }, view: { id: 'V1', callback_id: 'nope' } },
    ],
  ])('acknowledges %s at once with 200', async (_what, body) => {
    const h = await harness();
    const response = await h.slack.send(payload(body), FORM);
    expect(response.status).toBe(200);
    expect(response.body).not.toContain('at ');
    // Answered when the listeners were done, not by the safety net that answers at 2.5 s.
    expect(h.logs.lines.join('\n')).not.toContain('no listener acknowledged in time');
  });

  it('acknowledges app_rate_limited and other commands', async () => {
    const h = await harness();
    const limited = await h.slack.send(
      JSON.stringify({ type: 'app_rate_limited', team_id: 'T1', minute_rate_limited: 1 }),
      'application/json',
    );
    expect(limited.status).toBe(200);
    const other = await h.slack.command(
      h.user('sam.taylor@corp.example'),
      h.channel('general'),
      'x',
      '/other',
    );
    expect(other.status).toBe(200);
  });

  it('opens the form for a command that comes without text', async () => {
    const h = await harness();
    const sam = h.user('sam.taylor@corp.example');
    const fields = h.slack.commandPayload(sam, h.channel('general'), '');
    delete fields.text;
    const response = await h.slack.send(new URLSearchParams(fields).toString(), FORM);
    expect(response.status).toBe(200);
    await waitFor(() => [...h.workspace.views.values()].find((v) => v.user === sam));
  });

  it('keeps the form with a field error when a submission comes with state.values null', async () => {
    const h = await harness();
    const view = await h.openModal('sam.taylor@corp.example');
    const body = h.slack.viewSubmissionPayload(view.id);
    (body.view as { state: unknown }).state = { values: null };
    const response = await h.slack.interaction(body);
    expect(response.status).toBe(200);
    expect(response.json?.response_action).toBe('errors');
  });
});

describe('a slow submission', () => {
  it('is acknowledged within Slack’s 3 s while lookups take 4 s, and its outcome arrives after', async () => {
    const h = await harness();
    const view = await h.openModal('sam.taylor@corp.example');
    // users.info (who is submitting) takes 4 s from now on.
    h.workspace.beforeCall = async (method) => {
      if (method === 'users.info') await new Promise((r) => setTimeout(r, 4000));
    };
    const sam = h.user('sam.taylor@corp.example');
    // The cache would answer at once: a new replica that never saw Sam.
    const replica = await h.startReplica();
    const slack = new SlackRequester({
      workspace: h.workspace,
      eventsUrl: `http://127.0.0.1:${replica.port}/slack/events`,
      signingSecret: SIGNING_SECRET,
      responseOrigin: h.env.SLACK_API_URL.replace(/\/api\/$/, ''),
    });
    const started = performance.now();
    const { response } = await slack.submitView(view.id, { note_input: 'slow but sure' });
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(JSON.stringify(h.workspace.views.get(view.id)?.view)).toContain('Checking');
    h.workspace.beforeCall = undefined;
    const approval = await waitFor(() => h.sim.approvals()[0], 10_000, 'the approval');
    await waitFor(
      () => JSON.stringify(h.workspace.views.get(view.id)?.view).includes(approval.djbh),
      10_000,
      'the outcome in the modal',
    );
    expect(h.sim.approvals()).toHaveLength(1);
    expect(sam).toBeTruthy();
  });
});

describe('replays', () => {
  it('starts one approval when the same submission reaches two replicas', async () => {
    const h = await harness();
    const replica = await h.startReplica();
    const view = await h.openModal('sam.taylor@corp.example');
    const body = h.slack.viewSubmissionPayload(view.id, { note_input: 'once' });
    const other = new SlackRequester({
      workspace: h.workspace,
      eventsUrl: `http://127.0.0.1:${replica.port}/slack/events`,
      signingSecret: SIGNING_SECRET,
      responseOrigin: h.env.SLACK_API_URL.replace(/\/api\/$/, ''),
    });
    const [a, b] = await Promise.all([h.slack.interaction(body), other.interaction(body)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await waitFor(() => h.sim.approvals().length > 0, 5000, 'the approval');
    await new Promise((r) => setTimeout(r, 500));
    expect(h.sim.approvals()).toHaveLength(1);
  });

  it('lets the person submit again after the service refused the first attempt', async () => {
    const h = await harness();
    const view = await h.openModal('sam.taylor@corp.example');
    h.sim.setFaults('start-approval', { html502: true });
    await h.slack.submitView(view.id, { note_input: 'first' });
    await waitFor(
      () => JSON.stringify(h.workspace.views.get(view.id)?.view).includes('note_input'),
      5000,
      'the form again',
    );
    h.sim.clearFaults();
    await h.slack.submitView(view.id, { note_input: 'second' });
    await waitFor(() => h.sim.approvals().length === 1, 5000, 'the approval');
  });
});
