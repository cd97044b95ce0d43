import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebClient } from '@slack/web-api';
import { sql } from 'kysely';
import type pino from 'pino';
import { createApprovalServiceClient } from './approval-service/approval-service-client.ts';
import { TEXT_LIMITS } from './approvals/acceptable-text.ts';
import {
  createAnnouncementDispatcher,
  type DispatchCounts,
} from './approvals/announcement-dispatcher.ts';
import type { ApprovalService } from './approvals/approval-types.ts';
import { announcementId } from './approvals/tracked-approval.ts';
import type { Config } from './config.ts';
import { describe } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import { type PollCounts, pollOnce } from './poller/poll-once.ts';
import { type PollSchedule, startPollSchedule } from './poller/poll-schedule.ts';
import { createHomePublisher } from './slack/home-publisher.ts';
import { createIdentities } from './slack/identities.ts';
import { registerListeners } from './slack/listeners/index.ts';
import { createSlackAnnouncer } from './slack/slack-announcer.ts';
import { createBoltApp, slackClientOptions } from './slack/slack-app.ts';
import { createSlackPeople } from './slack/slack-people.ts';
import { createAccountLinkStore } from './store/account-link-store.ts';
import { createApprovalStore } from './store/approval-store.ts';
import { type DatabaseHandle, openDatabase } from './store/database.ts';
import { createSubmissionGuard } from './store/submission-guard-store.ts';

// An idle dispatcher looks for work it was not told about (retries falling due, other replicas).
const DELIVERY_IDLE_MS = 1000;

export interface ApplicationOverrides {
  logDestination?: pino.DestinationStream;
  logger?: Logger;
  now?: () => Date;
  /** Replaces the HTTP client of the approval service. */
  service?: ApprovalService;
}

export interface Application {
  /** Where /slack/events and /healthz are served (HTTP mode), or /healthz (Socket Mode). */
  port: number;
  logger: Logger;
  /**
   * One poll pass at `now`, as the schedule would run it, then what it recorded delivered (the
   * background delivery would do that within moments; tests want it done when this returns).
   */
  poll(now?: Date): Promise<PollCounts & { delivered: DispatchCounts }>;
  /** Delivers what is deliverable at `now` and waits until that is done. */
  deliver(now?: Date): Promise<DispatchCounts>;
  stop(): Promise<void>;
}

/**
 * Builds and starts everything from a Config: database (migrated), approval-service client,
 * Bolt app with its listeners, the announcement dispatcher (delivering in the background, so
 * whatever an earlier run left undelivered goes out once serving) and the poll schedule. The
 * sandbox calls this too, with a Config pointing at its own stand-ins.
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
      logger.warn({ error: describe(error) }, 'database connection lost; it will reconnect'),
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
      noteLimit: config.approval.noteLimit,
    });

  try {
    return await serve(config, { logger, now, database, store, service });
  } catch (error) {
    // Nothing half-started stays open: a failed start (say, a refused bot token) releases the database.
    await database.close().catch(() => undefined);
    throw error;
  }
}

async function serve(
  config: Config,
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
    routes: [{ path: '/healthz', method: 'GET', handler: (_req, res) => health(res) }],
    timeoutMs: config.slack.timeoutMs,
  });
  const people = createSlackPeople(bolt.client);
  const links = createAccountLinkStore(database.db);
  const identities = createIdentities({ people, links });
  // The outbox has a client of its own, so a throttled background never slows an interaction.
  const background = new WebClient(
    botToken,
    slackClientOptions('background', {
      ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
      logger,
      timeoutMs: config.slack.timeoutMs,
    }),
  );
  const backgroundPeople = createSlackPeople(background);
  const webUrl = config.approval.webUrl ? { webUrl: config.approval.webUrl } : {};
  const home = createHomePublisher(
    { people, identities, links, store, logger, now, ...webUrl },
    bolt.client,
  );
  const announcer = createSlackAnnouncer({
    client: background,
    people: backgroundPeople,
    identities: createIdentities({ people: backgroundPeople, links }),
    home,
    ...webUrl,
    giveUpAfterDays: Math.round(config.poll.giveUpAfterMs / 86_400_000),
    sentDm: (djbh) => store.sentPost(announcementId(djbh, 'approver-dm')),
  });
  const dispatcher = createAnnouncementDispatcher(
    {
      store,
      announcer,
      logger,
      now,
      stillPending: async (approval) =>
        (await service.getStatus(approval.djbh)).decision === 'pending',
    },
    {
      leaseMs: config.delivery.leaseMs,
      callTimeoutMs: config.slack.timeoutMs,
      retryForMs: config.delivery.retryForMs,
      laneIntervalMs: config.delivery.channelIntervalMs,
      concurrency: config.delivery.concurrency,
      idleMs: DELIVERY_IDLE_MS,
    },
  );
  registerListeners(bolt, {
    service,
    store,
    dispatcher,
    submissions: createSubmissionGuard(database.db),
    textLimits: { title: TEXT_LIMITS.title, note: config.approval.noteLimit },
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

  const pollDeps = { store, service, logger, announce: dispatcher.wake };
  const pollOptions = {
    concurrency: config.poll.concurrency,
    maxIntervalMs: config.poll.maxIntervalMs,
    giveUpAfterMs: config.poll.giveUpAfterMs,
    passBudgetMs: config.poll.passBudgetMs,
    // A check may take three timeouts (two retries) and a little backoff.
    leaseMs: config.poll.passBudgetMs + 3 * config.approval.timeoutMs + 2000,
    ...(config.reminders.max > 0 ? { reminders: config.reminders } : {}),
  };
  // Whatever an earlier run left undelivered (it may have died mid-post) goes out in the background.
  dispatcher.start();
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
    async poll(at = now()) {
      const counts = await pollOnce(pollDeps, pollOptions, at);
      return { ...counts, delivered: await dispatcher.drain(at) };
    },
    deliver: (at = now()) => dispatcher.drain(at),
    async stop() {
      ready = false;
      await schedule.stop();
      await dispatcher.stop();
      await bolt.stop();
      if (healthServer) await new Promise<void>((resolve) => healthServer?.close(() => resolve()));
      await database.close();
    },
  };
}
