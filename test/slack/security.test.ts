import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startSandbox } from '../../src/sandbox/sandbox.ts';
import { signature } from '../../src/sandbox/slack-requests.ts';
import type { WebApiServer } from '../../src/sandbox/web-api-server.ts';
import type { Workspace } from '../../src/sandbox/workspace.ts';
import { freePort } from '../helpers/app-process.ts';
import {
  harnessPerTest,
  type LogCapture,
  SIGNING_SECRET,
  WAIT_AT_LEAST_MS,
  waitFor,
} from '../helpers/harness.ts';
import { type SocketModeApp, startSocketModeApp } from '../helpers/socket-mode-app.ts';

// What the app trusts at its edge. Over HTTP: nothing unsigned, except the one probe Slack itself
// sends unsigned (ssl_check), which is answered without reading it. Over Socket Mode: every
// envelope is acknowledged within Slack's 3 s, whether or not a listener takes it. And what the
// operator reads (metrics, probe details) is not served on the port Slack reaches.

const FORM = 'application/x-www-form-urlencoded';
const SLACK_ACK_LIMIT_MS = 3000;

describe('HTTP: the signature is checked first, except for Slack’s ssl_check probe', () => {
  const harness = harnessPerTest();
  const post = (port: number | undefined, body: string, contentType: string, headers = {}) =>
    fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': contentType, ...headers },
      body,
    });

  it('answers Slack’s unsigned ssl_check probe with 200, and reads and logs nothing of it', async () => {
    const h = await harness();
    // As Slack sends it: form-encoded, no X-Slack-Signature, no X-Slack-Request-Timestamp.
    const response = await post(h.app.port, 'ssl_check=1&token=probe-token-Q7x9', FORM);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    const logged = h.logs.lines.join('\n');
    expect(logged).not.toContain('probe-token-Q7x9');
    expect(logged).not.toContain('slack request refused');
    // The order of its two fields is Slack's business.
    expect((await post(h.app.port, 'token=t&ssl_check=1', FORM)).status).toBe(200);
  });

  it.each([
    ['a slash command', 'command=%2Fapprove&user_id=U1&channel_id=C1&trigger_id=t&text=', FORM],
    ['url_verification', '{"type":"url_verification","challenge":"c"}', 'application/json'],
    [
      'an event',
      '{"type":"event_callback","event":{"type":"app_home_opened"}}',
      'application/json',
    ],
    ['an interaction', 'payload=%7B%22type%22%3A%22block_actions%22%7D', FORM],
    ['ssl_check with one more field', 'ssl_check=1&token=t&command=%2Fapprove', FORM],
    ['ssl_check with a field twice', 'ssl_check=1&token=t&token=u', FORM],
    ['ssl_check without its token', 'ssl_check=1', FORM],
    ['ssl_check=0', 'ssl_check=0&token=t', FORM],
    ['ssl_check as JSON', '{"ssl_check":"1","token":"t"}', 'application/json'],
  ])('refuses %s sent without a signature with 401', async (_what, body, contentType) => {
    const h = await harness();
    expect((await post(h.app.port, body, contentType)).status).toBe(401);
  });

  /** Sends only a request's head (its body announced, never sent); resolves with the answer's status line. */
  function headOnly(port: number | undefined, headers: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port ?? 0, '127.0.0.1', () => {
        const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
        socket.write(
          ['POST /slack/events HTTP/1.1', 'host: 127.0.0.1', ...lines, '', ''].join('\r\n'),
        );
      });
      let answer = '';
      // An app that waits for the body never answers; one that does not answers at once, or,
      // on a busy machine, a little later: the bound is generous.
      const timer = setTimeout(() => {
        socket.destroy();
        resolve('(no answer: the app waited for the body)');
      }, WAIT_AT_LEAST_MS);
      socket.on('data', (chunk) => {
        answer += chunk.toString();
        if (answer.includes('\r\n')) {
          clearTimeout(timer);
          socket.destroy();
          resolve(answer.split('\r\n')[0] ?? '');
        }
      });
      socket.on('error', reject);
    });
  }

  it.each([
    ['a JSON body of 1 MiB', { 'content-type': 'application/json', 'content-length': '1048576' }],
    ['a form longer than any ssl_check', { 'content-type': FORM, 'content-length': '600' }],
    ['a body of no form type', { 'content-type': 'text/plain', 'content-length': '20' }],
  ])(
    'refuses an unsigned request that cannot be ssl_check (%s) without reading its body',
    async (_what, headers) => {
      const h = await harness();
      expect(await headOnly(h.app.port, headers)).toBe('HTTP/1.1 401 Unauthorized');
    },
  );

  /**
   * Posts `body` with Node's own HTTP client: all at once, or paced (64 KiB a turn of the event
   * loop, as a sender on a slower network), so it is still writing when the app decides.
   */
  function postAll(
    port: number | undefined,
    body: string,
    headers: Record<string, string>,
    paced = false,
  ): Promise<{ status: number | undefined; connection: string | undefined; sent: boolean }> {
    return new Promise((resolve, reject) => {
      let sent = false;
      const req = request(
        { host: '127.0.0.1', port, path: '/slack/events', method: 'POST', headers },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode, connection: res.headers.connection, sent }),
          );
        },
      );
      req.on('error', reject);
      req.on('finish', () => {
        sent = true;
      });
      if (!paced) return void req.end(body);
      const bytes = Buffer.from(body);
      const CHUNK = 64 * 1024;
      const writeFrom = (offset: number): void => {
        if (offset >= bytes.length) return void req.end();
        req.write(bytes.subarray(offset, offset + CHUNK), (error) => {
          if (error) reject(error);
          else setTimeout(() => writeFrom(offset + CHUNK), 1);
        });
      };
      writeFrom(0);
    });
  }

  it('answers a signed body of 2 MiB with 413, and the sender reads it instead of a broken pipe', async () => {
    const h = await harness();
    const body = `payload=${'x'.repeat(2 << 20)}`;
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': FORM,
      'x-slack-request-timestamp': String(now),
      'x-slack-signature': signature(SIGNING_SECRET, now, body),
    };
    const refused = { status: 413, connection: 'close', sent: true };
    // Answered once the body was read to its end (the sender wrote all of it), and the connection
    // closed: nothing unread is left for the close to reset. Several times, with a length and
    // without one (chunked): the reset raced the answer, and won about every other time.
    const chunked = { ...headers, 'transfer-encoding': 'chunked' };
    for (const sent of [headers, chunked, headers, chunked, headers, chunked, headers, chunked])
      expect(await postAll(h.app.port, body, sent)).toEqual(refused);
    expect(await postAll(h.app.port, body, headers, true)).toEqual(refused);
    expect(h.logs.lines.join('\n')).toContain('the body is larger than 1 MiB');
    expect((await post(h.app.port, 'ssl_check=1&token=t', FORM)).status).toBe(200);
  });

  it('verifies an ssl_check that comes with signature headers like any other request', async () => {
    const h = await harness();
    const body = 'ssl_check=1&token=t';
    const now = Math.floor(Date.now() / 1000);
    const signed = { 'x-slack-request-timestamp': String(now) };
    // Only one of the two headers, or a wrong signature: not Slack's probe, so verified, and refused.
    expect((await post(h.app.port, body, FORM, signed)).status).toBe(401);
    expect(
      (await post(h.app.port, body, FORM, { ...signed, 'x-slack-signature': 'v0=00' })).status,
    ).toBe(401);
    const good = signature(SIGNING_SECRET, now, body);
    expect(
      (await post(h.app.port, body, FORM, { ...signed, 'x-slack-signature': good })).status,
    ).toBe(200);
  });
});

describe('Socket Mode: every envelope is acknowledged within 3 s', () => {
  let ctx: SocketModeApp;
  let workspace: Workspace;
  let api: WebApiServer;
  let socket: SocketModeApp['socket'];
  let app: Application;
  let logs: LogCapture;

  beforeAll(async () => {
    ctx = await startSocketModeApp({ ADMIN_PORT: '0' });
    ({ workspace, api, socket, app, logs } = ctx);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  const person = () => workspace.userByLogin('sam.taylor@corp.example').id;
  const team = () => ({ id: workspace.teamId, domain: 'sandbox' });
  const channel = () => ({ id: workspace.channelByName('general').id, name: 'general' });
  const view = (callbackId: string) => ({
    id: 'V0CLOSED1',
    team_id: workspace.teamId,
    type: 'modal',
    blocks: [],
    private_metadata: '',
    callback_id: callbackId,
    state: { values: {} },
    hash: '1700000000.abcd',
    title: { type: 'plain_text', text: 'Request approval' },
    previous_view_id: null,
    root_view_id: 'V0CLOSED1',
    app_id: 'A0APPROVALS',
    external_id: '',
    app_installed_team_id: workspace.teamId,
    bot_id: workspace.botId,
  });

  // Interactions no listener of the app takes, in the shapes Slack sends them.
  const unhandled: Array<[string, string, () => Record<string, unknown>]> = [
    [
      'view_closed',
      'interactive',
      () => ({
        type: 'view_closed',
        team: team(),
        user: { id: person(), username: 'sam.taylor', team_id: workspace.teamId },
        api_app_id: 'A0APPROVALS',
        token: 'legacy-token',
        view: view('approval_request'),
        is_cleared: false,
        is_enterprise_install: false,
      }),
    ],
    [
      'block_suggestion',
      'interactive',
      () => ({
        type: 'block_suggestion',
        user: { id: person(), username: 'sam.taylor', team_id: workspace.teamId },
        container: { type: 'view', view_id: 'V0CLOSED1' },
        api_app_id: 'A0APPROVALS',
        token: 'legacy-token',
        action_id: 'approver_select',
        block_id: 'approver',
        value: 'mar',
        team: team(),
        view: view('approval_request'),
      }),
    ],
    [
      'interactive_message',
      'interactive',
      () => ({
        type: 'interactive_message',
        actions: [{ name: 'choice', type: 'button', value: 'yes' }],
        callback_id: 'legacy_attachment',
        team: team(),
        channel: channel(),
        user: { id: person(), name: 'sam.taylor' },
        action_ts: '1700000001.000100',
        message_ts: '1700000000.000100',
        attachment_id: '1',
        token: 'legacy-token',
        is_app_unfurl: false,
        response_url: `${api.origin}/respond/${person()}/${channel().id}`,
        trigger_id: workspace.issueTrigger(person()),
      }),
    ],
    [
      'dialog_submission',
      'interactive',
      () => ({
        type: 'dialog_submission',
        token: 'legacy-token',
        action_ts: '1700000002.000100',
        team: team(),
        user: { id: person(), name: 'sam.taylor' },
        channel: channel(),
        submission: { title: 'A legacy dialog' },
        callback_id: 'legacy_dialog',
        response_url: `${api.origin}/respond/${person()}/${channel().id}`,
        state: '',
      }),
    ],
    [
      'dialog_cancellation',
      'interactive',
      () => ({
        type: 'dialog_cancellation',
        token: 'legacy-token',
        action_ts: '1700000003.000100',
        team: team(),
        user: { id: person(), name: 'sam.taylor' },
        channel: channel(),
        callback_id: 'legacy_dialog',
        response_url: `${api.origin}/respond/${person()}/${channel().id}`,
        state: '',
      }),
    ],
    [
      'dialog_suggestion',
      'interactive',
      () => ({
        type: 'dialog_suggestion',
        token: 'legacy-token',
        action_ts: '1700000004.000100',
        team: team(),
        user: { id: person(), name: 'sam.taylor' },
        channel: channel(),
        name: 'approver',
        value: 'mar',
        callback_id: 'legacy_dialog',
        state: '',
      }),
    ],
    [
      'block_actions of another action',
      'interactive',
      () => ({
        type: 'block_actions',
        user: { id: person(), username: 'sam.taylor', team_id: workspace.teamId },
        api_app_id: 'A0APPROVALS',
        token: 'legacy-token',
        container: { type: 'message', message_ts: '1.2', channel_id: channel().id },
        trigger_id: workspace.issueTrigger(person()),
        team: team(),
        channel: channel(),
        actions: [
          { action_id: 'not_ours', block_id: 'b', type: 'button', value: 'v', action_ts: '1.3' },
        ],
      }),
    ],
    [
      'a global shortcut of another callback',
      'interactive',
      () => ({
        type: 'shortcut',
        token: 'legacy-token',
        action_ts: '1700000005.000100',
        team: team(),
        user: { id: person(), username: 'sam.taylor', team_id: workspace.teamId },
        is_enterprise_install: false,
        enterprise: null,
        callback_id: 'not_ours',
        trigger_id: workspace.issueTrigger(person()),
      }),
    ],
    [
      'view_submission of another form',
      'interactive',
      () => ({
        type: 'view_submission',
        team: team(),
        user: { id: person(), username: 'sam.taylor', team_id: workspace.teamId },
        api_app_id: 'A0APPROVALS',
        token: 'legacy-token',
        trigger_id: workspace.issueTrigger(person()),
        view: view('not_ours'),
        response_urls: [],
        is_enterprise_install: false,
      }),
    ],
    [
      'workflow_step_edit (steps from apps, retired)',
      'interactive',
      () => ({
        type: 'workflow_step_edit',
        token: 'legacy-token',
        action_ts: '1700000006.000100',
        team: team(),
        user: { id: person(), username: 'sam.taylor', team_id: workspace.teamId },
        callback_id: 'legacy_step',
        trigger_id: workspace.issueTrigger(person()),
        workflow_step: { workflow_id: '1', step_id: 's', inputs: {}, outputs: [] },
      }),
    ],
    ['a payload type Slack may add', 'interactive', () => ({ type: 'something_new' })],
    ['a payload type of toString', 'interactive', () => ({ type: 'toString' })],
    ['a payload type of constructor', 'interactive', () => ({ type: 'constructor' })],
    ['a payload type of __proto__', 'interactive', () => ({ type: '__proto__' })],
    [
      'a command of another app',
      'slash_commands',
      () => ({
        token: 'legacy-token',
        team_id: workspace.teamId,
        team_domain: 'sandbox',
        channel_id: channel().id,
        channel_name: 'general',
        user_id: person(),
        user_name: 'sam.taylor',
        command: '/other',
        text: '',
        api_app_id: 'A0APPROVALS',
        is_enterprise_install: 'false',
        response_url: `${api.origin}/respond/${person()}/${channel().id}`,
        trigger_id: workspace.issueTrigger(person()),
      }),
    ],
    [
      'an event no listener takes',
      'events_api',
      () => ({
        token: 'legacy-token',
        team_id: workspace.teamId,
        api_app_id: 'A0APPROVALS',
        event: {
          type: 'reaction_added',
          user: person(),
          item: { type: 'message', channel: channel().id, ts: '1.2' },
          reaction: 'eyes',
          event_ts: '1700000007.000100',
        },
        type: 'event_callback',
        event_id: 'Ev0REACTION',
        event_time: 1_700_000_007,
        authorizations: [{ team_id: workspace.teamId, user_id: workspace.botUserId, is_bot: true }],
      }),
    ],
  ];

  it.each(unhandled)(
    'acknowledges %s when the listeners are done',
    async (_what, type, payload) => {
      const started = performance.now();
      const ack = await socket.deliver(type, payload(), SLACK_ACK_LIMIT_MS);
      expect(performance.now() - started).toBeLessThan(SLACK_ACK_LIMIT_MS);
      expect(ack).toEqual({});
      // Answered once the listeners were done, not by the safety net at 2.5 s.
      expect(logs.lines.join('\n')).not.toContain('no listener acknowledged in time');
    },
  );

  it('acknowledges an envelope the listeners could not read, drops it, and says why in one line', async () => {
    const ack = await socket.deliver(
      'interactive',
      { type: 'block_actions', user: { id: person() }, actions: null },
      SLACK_ACK_LIMIT_MS,
    );
    expect(ack).toEqual({});
    const refused = logs.entries().filter((e) => e.msg === 'slack envelope refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.reason).toContain('actions');
    expect(logs.lines.join('\n')).not.toContain('"stack"');
  });

  it('needs no port with ADMIN_PORT set: the admin port serves the probes and /metrics', async () => {
    expect(app.port).toBeUndefined();
    const admin = `http://127.0.0.1:${app.adminPort}`;
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
    await waitFor(async () => (await fetch(`${admin}/readyz`)).status === 200, 5000, 'ready');
    expect(await (await fetch(`${admin}/metrics`)).text()).toContain('slack_approvals_');
  });
});

describe('the admin endpoints are off the port Slack reaches', () => {
  const harness = harnessPerTest();
  const get = (port: number | undefined, path: string) =>
    fetch(`http://127.0.0.1:${port}${path}`).then((r) => r.status);

  it('never serves /metrics on Slack’s port, which keeps the probes while there is no ADMIN_PORT', async () => {
    const h = await harness();
    expect(h.app.adminPort).toBeUndefined();
    expect(await get(h.app.port, '/metrics')).toBe(404);
    expect(await get(h.app.port, '/healthz')).toBe(200);
    expect(await get(h.app.port, '/readyz')).toBe(200);
  });

  it('with ADMIN_PORT, serves /healthz, /readyz and /metrics there, and only /slack/events on Slack’s port', async () => {
    const h = await harness({ env: { ADMIN_PORT: '0' } });
    for (const path of ['/healthz', '/readyz', '/metrics'])
      expect(await get(h.app.port, path), path).toBe(404);
    expect(await get(h.app.adminPort, '/healthz')).toBe(200);
    expect(await get(h.app.adminPort, '/readyz')).toBe(200);
    const metrics = await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('slack_approvals_announcements');
    // Slack's own requests are served as before.
    const verified = await h.slack.send(
      JSON.stringify({ token: 't', challenge: 'c-123', type: 'url_verification' }),
      'application/json',
    );
    expect(verified.json).toEqual({ challenge: 'c-123' });
  });

  it('has the image’s HEALTHCHECK find /healthz on ADMIN_PORT, or on PORT without it, and fail when nothing answers', async () => {
    const script = healthcheckScript();
    const run = (env: Record<string, string>) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['-e', script], {
          env: { PATH: process.env.PATH ?? '', ...env },
          stdio: 'ignore',
        });
        child.on('exit', (code) => resolve(code));
      });
    const withAdmin = await harness({ env: { ADMIN_PORT: '0' } });
    expect(
      await run({ PORT: String(withAdmin.app.port), ADMIN_PORT: String(withAdmin.app.adminPort) }),
    ).toBe(0);
    // The probe is not on Slack's port any more: a healthcheck that looked there would fail.
    expect(await run({ PORT: String(withAdmin.app.port) })).toBe(1);
    expect(await run({ PORT: String(await freePort()) })).toBe(1);
  });

  it('has the image’s HEALTHCHECK fall back to PORT when ADMIN_PORT is unset or empty', async () => {
    const script = healthcheckScript();
    const h = await harness();
    for (const env of [
      { PORT: String(h.app.port) },
      { PORT: String(h.app.port), ADMIN_PORT: '' },
    ]) {
      const code = await new Promise<number | null>((resolve) =>
        spawn(process.execPath, ['-e', script], {
          env: { PATH: process.env.PATH ?? '', ...env },
          stdio: 'ignore',
        }).on('exit', resolve),
      );
      expect(code).toBe(0);
    }
  });
});

/** The node script of the Dockerfile's HEALTHCHECK (`CMD ["node", "-e", "…"]`). */
function healthcheckScript(): string {
  const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
  // One instruction per line once its continuation lines are joined.
  const instruction = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .find((line) => line.startsWith('HEALTHCHECK'));
  const exec = JSON.parse(/CMD\s+(\[.*\])/.exec(instruction ?? '')?.[1] ?? '[]') as string[];
  expect(exec.slice(0, 2)).toEqual(['node', '-e']);
  return exec[2] ?? '';
}

describe('the sandbox never opens a database or a service it did not create', () => {
  it.each([
    [{ DATABASE_URL: 'postgres://app:pg-secret@db.internal/approvals' }, 'DATABASE_URL'],
    [{ APPROVAL_BASE_URL: 'https://approvals.corp.example' }, 'APPROVAL_BASE_URL'],
  ])('refuses APP_MODE=sandbox with %o, naming the setting', (env, named) => {
    expect(() => loadConfig({ APP_MODE: 'sandbox', ...env })).toThrow(
      new RegExp(`${named}: the sandbox refuses to start with ${named} set`),
    );
  });

  it('refuses a SANDBOX_DATA_DIR that is a database URL, so the sandbox cannot reach Postgres through it', () => {
    expect(() =>
      loadConfig({
        APP_MODE: 'sandbox',
        SANDBOX_DATA_DIR: 'postgres://app:pg-secret@db.internal/approvals#',
      }),
    ).toThrow(/SANDBOX_DATA_DIR: must be a folder, not a URL/);
  });

  it('refuses any database but its own sandbox.db when started from code, and leaves it untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-foreign-'));
    const deployment = join(dir, 'approvals.db');
    writeFileSync(deployment, 'a deployment’s rows');
    const base = loadConfig({ APP_MODE: 'sandbox', SANDBOX_DATA_DIR: dir, PORT: '0' });
    try {
      for (const databaseUrl of [
        deployment,
        'postgres://app:pg-secret@db.internal/approvals',
        // What SANDBOX_DATA_DIR='postgres://…#' would have made: its basename is sandbox.db.
        'postgres://app:pg-secret@db.internal/approvals#/sandbox.db',
        join(dir, 'elsewhere', 'sandbox.db'),
      ]) {
        const started = startSandbox({ ...base, databaseUrl }, createLogger('fatal'));
        await expect(started).rejects.toMatchObject({ code: 'sandbox_foreign_database' });
        await expect(started).rejects.not.toThrow(/pg-secret/);
      }
      expect(readFileSync(deployment, 'utf8')).toBe('a deployment’s rows');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
