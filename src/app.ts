import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type pino from 'pino';
import { createApprovalServiceClient } from './approval-service/approval-service-client.ts';
import {
  createAnnouncementDispatcher,
  type DispatchCounts,
} from './approvals/announcement-dispatcher.ts';
import type { ApprovalService } from './approvals/approval-types.ts';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { type PollCounts, pollOnce } from './poller/poll-once.ts';
import { type PollSchedule, startPollSchedule } from './poller/poll-schedule.ts';
import { createHomePublisher } from './slack/home-publisher.ts';
import { createIdentities } from './slack/identities.ts';
import { registerListeners } from './slack/listeners/index.ts';
import { createSlackAnnouncer } from './slack/slack-announcer.ts';
import { createBoltApp } from './slack/slack-app.ts';
import { createSlackPeople } from './slack/slack-people.ts';
import { createAccountLinkStore } from './store/account-link-store.ts';
import { createApprovalStore } from './store/approval-store.ts';
import { type DatabaseHandle, openDatabase } from './store/database.ts';

export interface ApplicationOverrides {
  logDestination?: pino.DestinationStream;
  logger?: Logger;
  now?: () => Date;
  /** Web API retries (default 3); tests use 0. */
  slackRetries?: number;
  /** Replaces the HTTP client of the approval service. */
  service?: ApprovalService;
}

export interface Application {
  /** Where /slack/events and /healthz are served (HTTP mode), or /healthz (Socket Mode). */
  port: number;
  logger: Logger;
  /** One poll pass now, as the schedule would run it. */
  poll(now?: Date): Promise<PollCounts>;
  /** Delivers pending announcements now (each poll pass ends with this too). */
  deliver(): Promise<DispatchCounts>;
  stop(): Promise<void>;
}

/**
 * Builds and starts everything from a Config: database (migrated), approval-service client,
 * Bolt app with its listeners, announcement dispatcher and the poll schedule. Pending
 * announcements left by an earlier run are delivered at start. The sandbox calls this too, with a
 * Config pointing at its own stand-ins.
 */
export async function startApplication(
  config: Config,
  overrides: ApplicationOverrides = {},
): Promise<Application> {
  const botToken = config.slack.botToken;
  if (!botToken)
    throw new Error(
      'startApplication needs Slack settings; the sandbox provides them in sandbox mode',
    );
  const logger = overrides.logger ?? createLogger(config.logLevel, overrides.logDestination);
  const now = overrides.now ?? (() => new Date());
  const database = await openDatabase(config.databaseUrl, {
    onConnectionError: (error) =>
      logger.warn({ err: error }, 'database connection lost; it will reconnect'),
  });
  logger.info({ dialect: database.dialect, location: database.location }, 'database ready');
  const store = createApprovalStore(database.db, database.dialect);
  const service =
    overrides.service ??
    createApprovalServiceClient({
      baseUrl: config.approval.baseUrl ?? '',
      appName: config.approval.appName,
      appKey: config.approval.appKey,
      timeoutMs: config.approval.timeoutMs,
    });

  try {
    return await serve(config, overrides, { logger, now, database, store, service });
  } catch (error) {
    // Nothing half-started stays open: a failed start (say, a refused bot token) releases the database.
    await database.close().catch(() => undefined);
    throw error;
  }
}

async function serve(
  config: Config,
  overrides: ApplicationOverrides,
  parts: {
    logger: Logger;
    now: () => Date;
    database: DatabaseHandle;
    store: ReturnType<typeof createApprovalStore>;
    service: ApprovalService;
  },
): Promise<Application> {
  const { logger, now, database, store, service } = parts;
  const botToken = config.slack.botToken ?? '';
  let ready = false;
  // 200 once serving and while the database answers; a load balancer takes a replica out otherwise.
  const health = (res: ServerResponse) => {
    const answer = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!ready) return answer(503, { ok: false, starting: true });
    sql`select 1`.execute(database.db).then(
      () => answer(200, { ok: true }),
      () => answer(503, { ok: false, database: 'unreachable' }),
    );
  };
  const bolt = await createBoltApp({
    botToken,
    ...(config.slack.signingSecret ? { signingSecret: config.slack.signingSecret } : {}),
    ...(config.mode === 'socket' && config.slack.appToken
      ? { appToken: config.slack.appToken }
      : {}),
    ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
    logger,
    routes: [{ path: '/healthz', method: ['GET'], handler: (_req, res) => health(res) }],
    ...(overrides.slackRetries !== undefined ? { retries: overrides.slackRetries } : {}),
  });
  const people = createSlackPeople(bolt.client);
  const links = createAccountLinkStore(database.db);
  const identities = createIdentities({ people, links });
  const webUrl = config.approval.webUrl ? { webUrl: config.approval.webUrl } : {};
  const home = createHomePublisher(
    { people, identities, links, store, logger, now, ...webUrl },
    bolt.client,
  );
  const announcer = createSlackAnnouncer({
    client: bolt.client,
    people,
    identities,
    home,
    ...webUrl,
    giveUpAfterDays: Math.round(config.poll.giveUpAfterMs / 86_400_000),
  });
  const dispatcher = createAnnouncementDispatcher({
    store,
    announcer,
    logger,
    leaseMs: config.announcementLeaseMs,
  });
  registerListeners(bolt, {
    service,
    store,
    dispatcher,
    people,
    identities,
    links,
    home,
    logger,
    now,
    ...webUrl,
  });

  let port: number;
  let healthServer: Server | undefined;
  if (config.mode === 'socket') {
    await bolt.start();
    healthServer = createServer((req, res) => {
      if (req.url === '/healthz') health(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => healthServer?.listen(config.port, resolve));
    port = (healthServer.address() as AddressInfo).port;
  } else {
    const server = (await bolt.start(config.port)) as Server;
    port = (server.address() as AddressInfo).port;
  }

  const pollDeps = { store, service, dispatcher, logger };
  const pollOptions = {
    concurrency: config.poll.concurrency,
    maxIntervalMs: config.poll.maxIntervalMs,
    giveUpAfterMs: config.poll.giveUpAfterMs,
    ...(config.reminders.max > 0 ? { reminders: config.reminders } : {}),
  };
  // Whatever an earlier run left undelivered (it may have died mid-post) goes out first.
  await dispatcher.deliverPending(now).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not deliver pending announcements at start');
  });
  const schedule: PollSchedule = startPollSchedule(
    pollDeps,
    { ...pollOptions, cron: config.poll.cron },
    now,
  );
  ready = true;
  logger.info({ mode: config.mode, port, cron: config.poll.cron }, 'slack-approvals is serving');

  return {
    port,
    logger,
    poll: (at = now()) => pollOnce(pollDeps, pollOptions, at),
    deliver: () => dispatcher.deliverPending(now),
    async stop() {
      ready = false;
      await schedule.stop();
      await bolt.stop();
      if (healthServer) await new Promise<void>((resolve) => healthServer?.close(() => resolve()));
      await database.close();
    },
  };
}
