import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach } from 'vitest';
import { type Application, startApplication } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { SlackFaults } from '../../src/sandbox/slack-faults.ts';
import { SlackRequester } from '../../src/sandbox/slack-requests.ts';
import { startWebApiServer, type WebApiServer } from '../../src/sandbox/web-api-server.ts';
import { Workspace, type WorkspaceOptions } from '../../src/sandbox/workspace.ts';
import { createSimulator } from '../../src/simulator/simulator.ts';

export const SIGNING_SECRET = 'test-signing-secret-8f742231b10e';

export interface HarnessOptions {
  /** Logins that have no Slack account. */
  notOnSlack?: string[];
  /** Slack users the approval service does not know. */
  extraSlackUsers?: Array<{ login: string; name: string; locale?: string; email?: string | null }>;
  env?: Record<string, string>;
  databaseUrl?: string;
  /** The application's clock (the database's clock, which leases use, is never faked). */
  now?: () => Date;
  /** The simulator's note column (5,000 plays an install that missed the schema update). */
  serviceNoteLimit?: number;
  /** An Enterprise Grid workspace: its people get `W…` ids (see Workspace's Enterprise). */
  enterprise?: WorkspaceOptions['enterprise'];
  /** The bot scopes Slack reports and enforces (a leaner manifest); unset: all of them. */
  grantedScopes?: readonly string[];
}

/** Captured log lines (JSON objects), for asserting what was logged and what never was. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }

  entries(): Array<Record<string, unknown>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

/**
 * The whole product on loopback: the simulator, a Slack workspace stand-in serving the Web API,
 * a fresh SQLite database, and the real application in HTTP mode on a free port.
 */
export async function startHarness(options: HarnessOptions = {}) {
  const sim = await createSimulator({
    port: 0,
    ...(options.serviceNoteLimit ? { noteLimit: options.serviceNoteLimit } : {}),
  });
  const notOnSlack = new Set(options.notOnSlack ?? []);
  const workspaceOptions: WorkspaceOptions = {
    ...(options.enterprise ? { enterprise: options.enterprise } : {}),
    ...(options.grantedScopes ? { grantedScopes: options.grantedScopes } : {}),
    people: [
      ...sim.people
        .filter((p) => !notOnSlack.has(p.login))
        .map((p) => ({
          login: p.login,
          name: p.name,
          locale: p.locale,
          ...(p.slack ? { slack: p.slack } : {}),
        })),
      ...(options.extraSlackUsers ?? []),
    ],
    channels: [
      { name: 'general', appIsMember: true },
      { name: 'random', appIsMember: false },
      { name: 'secret', kind: 'private', appIsMember: false },
    ],
  };
  const workspace = new Workspace(workspaceOptions);
  const faults = new SlackFaults();
  const api: WebApiServer = await startWebApiServer(workspace, 0, faults.interceptor);
  const dir = mkdtempSync(join(tmpdir(), 'slack-approvals-e2e-'));
  const databaseUrl = options.databaseUrl ?? join(dir, 'approvals.db');
  const env = {
    SLACK_BOT_TOKEN: workspace.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: api.apiUrl,
    PORT: '0',
    APPROVAL_BASE_URL: sim.url,
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'sandbox-app-key',
    APPROVAL_TIMEOUT_MS: '2000',
    DATABASE_URL: databaseUrl,
    // Tests run passes themselves (app.poll); the schedule is tested on its own.
    STATUS_POLL_CRON: '0 0 1 1 *',
    // Nor the hot pass (HOT_POLL_CRON): tests run it themselves (app.hotPoll) or turn it on.
    HOT_POLL_CRON: 'off',
    LOG_LEVEL: 'info',
    // Tests that count reminders in hours from now run at any hour of any day; those of working
    // hours turn them on (and fix the app's clock).
    WORKING_HOURS: 'off',
    ...options.env,
  };
  const logs = new LogCapture();
  // Production's settings throughout: the same Web API clients, retries and timeouts.
  const overrides = { logDestination: logs, ...(options.now ? { now: options.now } : {}) };
  let app: Application = await startApplication(loadConfig(env), overrides);
  const requester = () =>
    new SlackRequester({
      workspace,
      eventsUrl: `http://127.0.0.1:${app.port}/slack/events`,
      signingSecret: SIGNING_SECRET,
      responseOrigin: api.origin,
    });
  let slack = requester();
  const replicas: Application[] = [];

  const harness = {
    sim,
    workspace,
    faults,
    env,
    logs,
    get app() {
      return app;
    },
    get slack() {
      return slack;
    },
    user: (login: string) => workspace.userByLogin(login).id,
    channel: (name: string) => workspace.channelByName(name).id,
    /** Stops the application and starts it again on the same database, as a restart would. */
    async restart(whileDown?: () => void | Promise<void>) {
      await app.stop();
      await whileDown?.();
      app = await startApplication(loadConfig(env), overrides);
      slack = requester();
    },
    /** Opens the modal with /approve and waits until it is filled in. */
    async openModal(login: string, channelName = 'general', text = 'New storage node') {
      const userId = workspace.userByLogin(login).id;
      const response = await slack.command(userId, workspace.channelByName(channelName).id, text);
      if (response.status !== 200) throw new Error(`/approve answered ${response.status}`);
      const view = await waitFor(() =>
        [...workspace.views.values()].find(
          (v) =>
            v.user === userId &&
            JSON.stringify(v.view).includes('"lookup"') &&
            !JSON.stringify(v.view).includes('hourglass'),
        ),
      );
      return view;
    },
    /**
     * Starts an approval through Slack as a person would (/approve, submit), and waits until the
     * request message and the approver's DM are out.
     */
    async startApproval(
      login = 'sam.taylor@corp.example',
      channelName = 'general',
      title = 'New storage node',
    ) {
      const before = sim.approvals().length;
      const view = await harness.openModal(login, channelName, title);
      await slack.submitView(view.id, { note_input: 'For the Q3 expansion' });
      const approval = await waitFor(
        () => sim.approvals()[before],
        5000,
        'the approval in the service',
      );
      const parent = await waitFor(
        () => workspace.messages.find((m) => isRequestMessage(m, approval.djbh)),
        5000,
        'the request message',
      );
      await waitFor(
        () =>
          workspace
            .callsOf('chat.postMessage')
            .some((c) => JSON.stringify(c.args).includes(`${approval.djbh}:approver-dm`)),
        5000,
        'the approver DM',
      );
      return { approval, parent };
    },
    /**
     * Another instance of the app on the same database, Slack and service, as a second replica;
     * `now` gives it a clock of its own (a replica whose clock is off).
     */
    async startReplica(replicaOptions: { now?: () => Date } = {}): Promise<Application> {
      const replica = await startApplication(loadConfig(env), {
        ...overrides,
        ...(replicaOptions.now ? { now: replicaOptions.now } : {}),
      });
      replicas.push(replica);
      return replica;
    },
    async close() {
      for (const replica of replicas) await replica.stop();
      await app.stop();
      await api.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/** A fresh harness per test, closed after it: `const harness = harnessPerTest();` in a test file. */
export function harnessPerTest(): (options?: HarnessOptions) => Promise<Harness> {
  let current: Harness | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return async (options = {}) => {
    current = await startHarness(options);
    return current;
  };
}

/** The request message of an approval (not the approver's DM, which names the number too). */
export function isRequestMessage(
  m: { threadTs?: string; metadata?: { event_payload: Record<string, unknown> } },
  djbh: string,
): boolean {
  return !m.threadTs && m.metadata?.event_payload.announcement_id === `${djbh}:request`;
}

/** The kind (with occurrence and term) of the announcement a message carries: `reminder:1@1`. */
export function kindOf(m: { metadata?: { event_payload: Record<string, unknown> } }): string {
  return String(m.metadata?.event_payload.announcement_id ?? '').replace(/^[^:]*:/, '');
}

/**
 * Messages in the app's DM with `login` carrying an announcement of `kind`: exactly that
 * (`reminder:1@1`, `approver-dm`), or any occurrence of it (`escalation` finds `escalation:1`).
 */
export function dmsTo(hh: Harness, login: string, kind: string) {
  const id = hh.user(login);
  return hh.workspace.messages.filter((m) => {
    const channel = hh.workspace.channels.get(m.channel);
    const carried = kindOf(m);
    return (
      channel?.kind === 'im' &&
      channel.members.has(id) &&
      (carried === kind || carried.startsWith(`${kind}:`))
    );
  });
}

/**
 * The least time a wait for a condition allows before it fails. A wait ends as soon as its
 * condition holds, so a long bound costs a passing test nothing; a short one fails a correct test
 * on a busy machine (CI beside another suite on two cores runs many times slower than alone).
 */
export const WAIT_AT_LEAST_MS = 30_000;

/**
 * Polls `condition` until it returns something truthy; fails with `what` after `timeoutMs`, or
 * `WAIT_AT_LEAST_MS` if that is longer (`timeoutMs` says what a quiet machine needs at most).
 */
export async function waitFor<T>(
  condition: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = WAIT_AT_LEAST_MS,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + Math.max(timeoutMs, WAIT_AT_LEAST_MS);
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
