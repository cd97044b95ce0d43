import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, type Receiver } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { boltLogger, createLogger } from '../../../src/logger.ts';
import { SlackRequester } from '../../../src/sandbox/slack-requests.ts';
import { startWebApiServer } from '../../../src/sandbox/web-api-server.ts';
import { Workspace } from '../../../src/sandbox/workspace.ts';
import { dispatchAcknowledged } from '../../../src/slack/receivers/acknowledged-dispatch.ts';
import { createBoltApp } from '../../../src/slack/receivers/slack-app.ts';
import { LogCapture } from '../../helpers/harness.ts';

// The one acknowledge-once rule of both transports (the HTTP receiver and the Socket Mode
// receiver), run against a real Bolt App whose listeners misbehave: Slack gets exactly one answer,
// by the deadline at the latest, and a command whose listener throws gets an apology.

const DEADLINE_MS = 200;
/**
 * For the tests whose answer must not wait for the deadline: one no run reaches, however busy the
 * machine, so an answer before it can only have come without the deadline's timer.
 */
const NEVER_MS = 60_000;

function boltApp(register: (app: App) => void) {
  // The bot's ids are given, so Bolt calls nothing; the receiver is never started.
  const receiver: Receiver = {
    init: () => undefined,
    start: async () => undefined,
    stop: async () => undefined,
  };
  const app = new App({
    token: 'xoxb-test',
    botId: 'B1',
    botUserId: 'U0BOT',
    receiver,
    logger: boltLogger(createLogger('fatal')),
  });
  register(app);
  return app;
}

function delivery(body: Record<string, unknown>) {
  const answers: Array<{ at: number; response: unknown }> = [];
  const started = performance.now();
  return {
    answers,
    delivery: {
      body,
      acknowledge: (response?: unknown) => {
        answers.push({ at: performance.now() - started, response });
      },
    },
  };
}

const submission = {
  type: 'view_submission',
  team: { id: 'T1', domain: 'd' },
  user: { id: 'U1', username: 'u', team_id: 'T1' },
  view: { id: 'V1', callback_id: 'slow_form', state: { values: {} } },
};
const command = {
  command: '/approve',
  text: '',
  team_id: 'T1',
  user_id: 'U1',
  channel_id: 'C1',
  trigger_id: 't',
};

describe('dispatchAcknowledged', () => {
  it('answers at the deadline when a listener has not acknowledged, and refuses its late ack', async () => {
    const logs = new LogCapture();
    let lateAck: Promise<unknown> | undefined;
    let answeredBeforeLateAck: number | undefined;
    const app = boltApp((a) =>
      a.view('slow_form', async ({ ack }) => {
        await new Promise((r) => setTimeout(r, DEADLINE_MS * 2));
        answeredBeforeLateAck = answers.length;
        lateAck = ack({ response_action: 'clear' }).then(
          () => 'accepted',
          (error: Error) => error.message,
        );
        await lateAck;
      }),
    );
    const { answers, delivery: d } = delivery(submission);
    await dispatchAcknowledged(app, d, {
      logger: createLogger('info', logs),
      deadlineMs: DEADLINE_MS,
    });
    expect(answers).toHaveLength(1);
    expect(answers[0]?.response).toBeUndefined();
    expect(answers[0]?.at).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    // At the deadline, not after the listener: answered before its late ack (by order, not by
    // the clock, which a busy machine stretches).
    expect(answeredBeforeLateAck).toBe(1);
    expect(await lateAck).toBe('this request was already acknowledged');
    expect(logs.lines.join('\n')).toContain('no listener acknowledged in time');
  });

  it('passes the listener’s own answer on, once', async () => {
    const app = boltApp((a) =>
      a.view('slow_form', async ({ ack }) => {
        await ack({ response_action: 'errors', errors: { title: 'Too long' } });
      }),
    );
    const { answers, delivery: d } = delivery(submission);
    await dispatchAcknowledged(app, d, { logger: createLogger('fatal'), deadlineMs: DEADLINE_MS });
    expect(answers.map((a) => a.response)).toEqual([
      { response_action: 'errors', errors: { title: 'Too long' } },
    ]);
  });

  it('answers a command whose listener throws before acknowledging with a short apology, and logs the bug with its stack', async () => {
    const logs = new LogCapture();
    const app = boltApp((a) =>
      a.command('/approve', async () => {
        throw new TypeError('a bug');
      }),
    );
    const { answers, delivery: d } = delivery(command);
    await dispatchAcknowledged(app, d, {
      logger: createLogger('info', logs),
      deadlineMs: NEVER_MS,
    });
    expect(answers).toHaveLength(1);
    expect(answers[0]?.response).toEqual({
      text: 'Something went wrong on our side; please try again.',
    });
    expect(answers[0]?.at).toBeLessThan(NEVER_MS);
    const failed = logs.entries().find((e) => e.msg === 'a listener failed before acknowledging');
    expect(JSON.stringify(failed)).toContain('a bug');
    expect(JSON.stringify(failed)).toContain('"stack"');
  });

  it('answers at once when no listener takes the request', async () => {
    const app = boltApp(() => undefined);
    const { answers, delivery: d } = delivery(submission);
    await dispatchAcknowledged(app, d, { logger: createLogger('fatal'), deadlineMs: NEVER_MS });
    expect(answers).toHaveLength(1);
    expect(answers[0]?.at).toBeLessThan(NEVER_MS);
  });
});

describe('the app’s own Bolt app (createBoltApp)', () => {
  it('answers a command whose listener throws before acknowledging with the apology, over signed HTTP', async () => {
    const workspace = new Workspace({
      people: [{ login: 'sam.taylor@corp.example', name: 'Sam' }],
    });
    const api = await startWebApiServer(workspace);
    const logs = new LogCapture();
    const app = await createBoltApp({
      botToken: workspace.botToken,
      signingSecret: 'test-secret',
      apiUrl: api.apiUrl,
      logger: createLogger('info', logs),
      timeoutMs: 2000,
      // Slack's 2.5 s, on a busy machine, could run out before the listener throws.
      ackDeadlineMs: NEVER_MS,
    });
    app.command('/boom', async () => {
      throw new TypeError('a bug');
    });
    const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server;
    try {
      const slack = new SlackRequester({
        workspace,
        eventsUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`,
        signingSecret: 'test-secret',
        responseOrigin: api.origin,
      });
      const sam = workspace.userByLogin('sam.taylor@corp.example').id;
      const started = performance.now();
      const response = await slack.command(sam, 'C0GENERAL', '', '/boom');
      expect(response.status).toBe(200);
      expect(response.json).toEqual({
        text: 'Something went wrong on our side; please try again.',
      });
      expect(performance.now() - started).toBeLessThan(NEVER_MS);
      expect(logs.lines.join('\n')).not.toContain('no listener acknowledged in time');
      const failed = logs.entries().find((e) => e.msg === 'a listener failed before acknowledging');
      expect(JSON.stringify(failed)).toContain('a bug');
    } finally {
      await app.stop();
      await api.close();
    }
  });
});
