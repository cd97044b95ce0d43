import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackRequester } from '../../src/sandbox/slack-requests.ts';
import { startWebApiServer, type WebApiServer } from '../../src/sandbox/web-api-server.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { AppProcess, freePort } from '../helpers/app-process.ts';
import { SIGNING_SECRET } from '../helpers/harness.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

// 1,000 seeded, randomly malformed but correctly signed requests against the app as its own
// process: it stays up, never answers 5xx, and answers each within Slack's 3 s.

const SEED = 20261122;
const COUNT = 1000;

/** A seeded generator, so a failure can be replayed. */
const random = seededRandom;

function generator(rnd: () => number, known: { users: string[]; channels: string[] }) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T;
  const weird = (): unknown =>
    pick([
      () => null,
      () => undefined,
      () => Math.floor(rnd() * 1e6),
      () => rnd() > 0.5,
      () => '',
      () => '<!channel> & <@U1>',
      () => 'x'.repeat(Math.floor(rnd() * 5000)),
      () => [],
      () => [weird()],
      () => ({}),
      () => ({ id: weird() }),
      () => pick(known.users),
      () => '\ud800',
    ])();
  const mutate = (base: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...base };
    const keys = Object.keys(out);
    for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
      const key = pick(keys);
      if (rnd() < 0.3) delete out[key];
      else out[key] = weird();
    }
    return out;
  };
  const user = () => ({ id: rnd() < 0.7 ? pick(known.users) : weird() });
  const view = () => ({
    id: rnd() < 0.8 ? `V${Math.floor(rnd() * 1e6)}` : weird(),
    callback_id: pick(['approval_request', 'link_account', 'x', weird()]),
    private_metadata: pick(['', '{}', '{"channelId":"C1"}', weird()]),
    state: pick([
      { values: null },
      { values: { title: { title_input: { value: weird() } } } },
      { values: weird() },
      weird(),
    ]),
  });
  const bases: Array<() => Record<string, unknown>> = [
    () => ({
      type: 'block_actions',
      user: user(),
      actions: [{ action_id: pick(['open_in_service', 'x', weird()]) }],
    }),
    () => ({ type: 'view_submission', user: user(), view: view() }),
    () => ({ type: 'view_closed', user: user(), view: view() }),
    () => ({ type: 'shortcut', user: user(), callback_id: 'x', trigger_id: 't' }),
    () => ({ type: 'message_action', user: user(), callback_id: 'x', trigger_id: 't' }),
    () => ({ type: 'block_suggestion', user: user(), action_id: 'x' }),
    () => ({
      type: 'event_callback',
      event: { type: pick(['app_home_opened', 'message', weird()]), user: pick(known.users) },
    }),
    () => ({ type: pick(['app_rate_limited', 'url_verification', 'nope', weird()]) }),
  ];
  return (): { body: string; contentType: string } => {
    const roll = rnd();
    if (roll < 0.25) {
      const fields: Record<string, unknown> = mutate({
        command: pick(['/approve', '/other', 'approve', '']),
        user_id: pick(known.users),
        channel_id: pick(known.channels),
        trigger_id: 'bogus.trigger',
        text: pick(['', 'status', 'status 9XFHBJySvnhh', 'link', 'list', 'help', '<!here>']),
        response_url: 'http://127.0.0.1:9/respond',
      });
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(fields))
        if (v !== undefined) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
      return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
    }
    const body = rnd() < 0.15 ? weird() : mutate(pick(bases)());
    const json = rnd() < 0.05 ? '{"cut": ' : (JSON.stringify(body) ?? 'null');
    if (rnd() < 0.6)
      return {
        body: new URLSearchParams({ payload: json }).toString(),
        contentType: pick(['application/x-www-form-urlencoded', 'text/plain']),
      };
    return { body: json, contentType: 'application/json' };
  };
}

describe(`${COUNT} randomized malformed signed requests (seed ${SEED})`, () => {
  let sim: Simulator;
  let workspace: Workspace;
  let api: WebApiServer;
  let dir: string;
  let app: AppProcess;

  beforeAll(async () => {
    sim = await createSimulator({ port: 0 });
    workspace = new Workspace({
      people: sim.people.map((p) => ({ login: p.login, name: p.name })),
    });
    api = await startWebApiServer(workspace);
    dir = mkdtempSync(join(tmpdir(), 'slack-approvals-fuzz-'));
    app = new AppProcess({
      SLACK_BOT_TOKEN: workspace.botToken,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: api.apiUrl,
      PORT: String(await freePort()),
      APPROVAL_BASE_URL: sim.url,
      APPROVAL_APP_NAME: 'slack-approvals',
      APPROVAL_APP_KEY: 'sandbox-app-key',
      DATABASE_URL: join(dir, 'approvals.db'),
      STATUS_POLL_CRON: '0 0 1 1 *',
      LOG_LEVEL: 'warn',
    });
    await app.start();
  });
  afterAll(async () => {
    await app?.stop();
    await api?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stays up, never answers 5xx, and answers each within 3 s', async () => {
    const slack = new SlackRequester({
      workspace,
      eventsUrl: `http://127.0.0.1:${app.port}/slack/events`,
      signingSecret: SIGNING_SECRET,
      responseOrigin: api.origin,
    });
    const next = generator(random(SEED), {
      users: [...workspace.users.keys()],
      channels: [...workspace.channels.keys()],
    });
    const requests = Array.from({ length: COUNT }, next);
    const results: Array<{ status: number; ms: number; i: number }> = [];
    let index = 0;
    const worker = async () => {
      for (let i = index++; i < requests.length; i = index++) {
        const request = requests[i];
        if (!request) break;
        const started = performance.now();
        const response = await slack.send(request.body, request.contentType);
        results.push({ status: response.status, ms: performance.now() - started, i });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const byStatus = new Map<number, number>();
    for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    // The generator reaches both the refusals and the listeners, not just one of them.
    expect(byStatus.get(400) ?? 0).toBeGreaterThan(100);
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(100);
    const serverErrors = results.filter((r) => r.status >= 500);
    const slow = results.filter((r) => r.ms >= 3000);
    expect(serverErrors.map((r) => requests[r.i])).toEqual([]);
    expect(slow.map((r) => ({ ms: Math.round(r.ms), request: requests[r.i] }))).toEqual([]);
    expect(results).toHaveLength(COUNT);
    expect((await fetch(`http://127.0.0.1:${app.port}/healthz`)).status).toBe(200);
    expect(app.output.join('')).not.toContain('uncaught exception');
  }, 240_000);
});
